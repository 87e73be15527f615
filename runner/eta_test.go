package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/sim"
)

func TestETAModel(t *testing.T) {
	window := 30 * time.Second
	tests := []struct {
		name                string
		m                   etaModel
		setupLeft, cellLeft int // setup: tokens of context
		retries             int
		want                time.Duration
		atLeast             bool
	}{
		{"nothing measured: the planned windows, at least", etaModel{window: window, maxAttempts: 2}, 2, 3, 0, 90 * time.Second, true},
		{"every cell looped and ran twice, 5 s around each window",
			etaModel{window: window, maxAttempts: 2, cells: 2, attempts: 4, cellTime: 4 * 35 * time.Second}, 0, 3, 0, 3 * 2 * 35 * time.Second, false},
		{"a cell about to run again adds one attempt, not a cell",
			etaModel{window: window, maxAttempts: 2, cells: 2, attempts: 5, cellTime: 5 * 35 * time.Second}, 0, 0, 1, 35 * time.Second, false},
		{"never more attempts than the retries allow",
			etaModel{window: window, maxAttempts: 2, cells: 1, attempts: 5, cellTime: 5 * 30 * time.Second}, 0, 1, 0, 2 * 30 * time.Second, false},
		{"contexts at what they took a token: 8K and 16K took 6 s, so 64K takes 16 s",
			etaModel{window: window, maxAttempts: 2, setupTokens: 24 << 10, setupTime: 6 * time.Second}, 64 << 10, 0, 0, 16 * time.Second, false},
		{"cells measured but no context set up: a context left is unknown",
			etaModel{window: window, maxAttempts: 2, cells: 1, attempts: 1, cellTime: 35 * time.Second}, 1 << 10, 1, 0, 35 * time.Second, true},
		{"contexts set up but no cell measured: the cells' overheads are unknown",
			etaModel{window: window, maxAttempts: 2, setupTokens: 1 << 10, setupTime: time.Second}, 2 << 10, 1, 0, 32 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, atLeast := tt.m.remaining(tt.setupLeft, tt.cellLeft, tt.retries)
			if got != tt.want || atLeast != tt.atLeast {
				t.Errorf("remaining(%d, %d, %d) = %v, %v; want %v, %v", tt.setupLeft, tt.cellLeft, tt.retries, got, atLeast, tt.want, tt.atLeast)
			}
		})
	}
}

// timedLog keeps each log line with the (virtual) time it was written.
type timedLog struct {
	mu    sync.Mutex
	lines []timedLine
}

type timedLine struct {
	at   time.Time
	text string
}

func (l *timedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		l.lines = append(l.lines, timedLine{time.Now(), line})
	}
	return len(p), nil
}

var etaPattern = regexp.MustCompile(`ETA ([0-9hms.]+)\]`)

// TestETAOfASweepThatLoops: a model that loops in every cell makes each
// cell run twice. From the first cell on, the ETA must count the retries
// and the time around each window, and so land near the time the sweep
// then took.
func TestETAOfASweepThatLoops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Loop = sim.LoopProfile{Probability: 1, AfterTokens: 20, Phrase: "round and round it goes"}
		_, url, dial := startMemSim(t, p)
		s := testSettings(url, []string{"1K", "2K"}, []int{1, 2, 4}, 2*time.Second)
		log := &timedLog{}
		if _, err := Run(context.Background(), Options{dial: dial, Settings: s, File: filepath.Join(t.TempDir(), "r.json"), Log: log}); err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		checked, learned := 0, false
		for _, l := range log.lines {
			m := etaPattern.FindStringSubmatch(l.text)
			if m == nil || !learned {
				// Until a cell has finished, nothing says cells loop.
				learned = strings.Contains(l.text, "] decode ")
				continue
			}
			eta, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatalf("%q: %v", l.text, err)
			}
			took := end.Sub(l.at)
			if d := (eta - took).Abs(); d > max(took/4, 1500*time.Millisecond) {
				t.Errorf("%q: the rest took %v", l.text, took.Round(100*time.Millisecond))
			}
			checked++
		}
		if checked < 8 {
			t.Fatalf("%d lines said an ETA after the first cell; the test proves nothing:\n%v", checked, log.lines)
		}
	})
}

var etaLine = regexp.MustCompile(`ETA (≥ )?([0-9hms.]+)\]`)

// TestSignsOfLifeAndETA: a sweep against a server without a tokenizer
// (its prompts calibrated, a request per count) and with a slow prefill
// spends most of its time outside the decode windows. Every silence
// longer than 2 s must follow a line that says what is under way and its
// deadline ("up to …"); every ETA must land near the time the rest took,
// and one said to be a lower bound ("ETA ≥ …") must be one. The runner
// once said "ETA 20s" where a minute was left, and nothing at all for the
// five seconds of the first prompt's calibration.
func TestSignsOfLifeAndETA(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := testProfile()
		p.Flavour = sim.FlavourOllama
		p.Prefill = sim.PrefillProfile{PeakTokS: 500, HalfContext: 1 << 20, RequestOverheadMs: 250}
		_, url, dial := startMemSim(t, p)
		s := testSettings(url, []string{"1K", "2K"}, []int{1, 2}, 5*time.Second)
		log := &timedLog{}
		if _, err := Run(context.Background(), Options{dial: dial, Settings: s, File: filepath.Join(t.TempDir(), "r.json"), Log: log}); err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		etas := 0
		for i, l := range log.lines {
			if i > 0 && l.at.Sub(log.lines[i-1].at) > 2*time.Second && !strings.Contains(log.lines[i-1].text, "up to ") {
				t.Errorf("%v without a word after %q, which gave no deadline", l.at.Sub(log.lines[i-1].at), log.lines[i-1].text)
			}
			m := etaLine.FindStringSubmatch(l.text)
			if m == nil {
				continue
			}
			eta, err := time.ParseDuration(m[2])
			if err != nil {
				t.Fatalf("%q: %v", l.text, err)
			}
			took := end.Sub(l.at)
			switch {
			case m[1] != "" && eta > took+time.Second/2: // rounded to the second
				t.Errorf("%q: a lower bound, but the rest took %v", l.text, took.Round(100*time.Millisecond))
			case m[1] == "" && (eta-took).Abs() > max(took/4, 1500*time.Millisecond):
				t.Errorf("%q: the rest took %v", l.text, took.Round(100*time.Millisecond))
			}
			etas++
		}
		if etas < 10 || t.Failed() {
			t.Fatalf("%d lines with an ETA:\n%s", etas, log)
		}
	})
}

func (l *timedLog) String() string {
	var b strings.Builder
	start := l.lines[0].at
	for _, line := range l.lines {
		fmt.Fprintf(&b, "%8v %s\n", line.at.Sub(start).Round(time.Millisecond), line.text)
	}
	return b.String()
}

// TestETACountsWhatProgressCounts: a cell the server said was over
// capacity is not measured again in a later pass, and progress counts it
// done; the ETA still counted its repeats left as cells to run.
func TestETACountsWhatProgressCounts(t *testing.T) {
	over := matrixgen.Decode{ContextTokens: 1024, Concurrency: 4, Status: matrixgen.StatusOverCapacity}
	valid := matrixgen.Decode{ContextTokens: 1024, Concurrency: 1, Status: matrixgen.StatusValid}
	withRepeat := func(d matrixgen.Decode) matrixgen.Decode { d.Repeats = []matrixgen.Decode{d}; return d }
	sw := &sweeper{
		run:      &matrixgen.Run{Sweep: matrixgen.Sweep{Repeats: 3}, Decode: []matrixgen.Decode{withRepeat(over), withRepeat(valid)}},
		probe:    &matrixgen.Probe{},
		contexts: []int{1024}, setUp: map[int]bool{1024: true},
		etaModel: etaModel{window: 30 * time.Second, maxAttempts: 1, cells: 1, attempts: 1, cellTime: 30 * time.Second},
	}
	left := sw.left(func(s matrixgen.Status) bool { return !finished(s) })
	eta, _ := sw.eta()
	if left != 2 || eta != time.Duration(left)*30*time.Second {
		t.Errorf("%d measurements left, ETA %v; want 2 and 1m0s", left, eta)
	}
}
