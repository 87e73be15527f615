package runner

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen/sim"
)

func TestETAModel(t *testing.T) {
	window := 30 * time.Second
	tests := []struct {
		name                  string
		m                     etaModel
		prefillLeft, cellLeft int // prefill: tokens of context
		retries               int
		want                  time.Duration
	}{
		{"nothing measured: the planned windows", etaModel{window: window, maxAttempts: 2}, 2, 3, 0, 90 * time.Second},
		{"every cell looped and ran twice, 5 s around each window",
			etaModel{window: window, maxAttempts: 2, cells: 2, attempts: 4, cellTime: 4 * 35 * time.Second}, 0, 3, 0, 3 * 2 * 35 * time.Second},
		{"a cell about to run again adds one attempt, not a cell",
			etaModel{window: window, maxAttempts: 2, cells: 2, attempts: 5, cellTime: 5 * 35 * time.Second}, 0, 0, 1, 35 * time.Second},
		{"never more attempts than the retries allow",
			etaModel{window: window, maxAttempts: 2, cells: 1, attempts: 5, cellTime: 5 * 30 * time.Second}, 0, 1, 0, 2 * 30 * time.Second},
		{"prefill rows at what they took a token: 8K and 16K took 6 s, so 64K takes 16 s",
			etaModel{window: window, maxAttempts: 2, prefillTokens: 24 << 10, prefillTime: 6 * time.Second}, 64 << 10, 0, 0, 16 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.remaining(tt.prefillLeft, tt.cellLeft, tt.retries); got != tt.want {
				t.Errorf("remaining(%d, %d, %d) = %v, want %v", tt.prefillLeft, tt.cellLeft, tt.retries, got, tt.want)
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
