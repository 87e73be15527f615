package runner

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
)

// Attacks and accidents a run must survive, each reproduced here.

// TestCapacityCheckCannotOverflow: -max-output 9223372036854775000 once
// passed the capacity check, because C × (N + max output) wrapped around.
func TestCapacityCheckCannotOverflow(t *testing.T) {
	for _, tt := range []struct {
		maxLen, kv, maxOut, concurrency int
	}{
		{0, 1 << 20, math.MaxInt - 807, 4}, // the sum fits, the product wraps
		{0, 1 << 20, math.MaxInt, 1},       // the sum wraps
		{1 << 20, 0, math.MaxInt - 100, 1}, // past the model's length
		{0, 1 << 20, math.MaxInt / 2, 3},   // wraps to a small positive product
	} {
		sw := &sweeper{probe: &matrixgen.Probe{MaxModelLen: tt.maxLen, KVCacheTokens: tt.kv}}
		sw.s.Sweep.MaxOutput = tt.maxOut
		if reason := sw.overCapacity(1024, tt.concurrency); reason == "" {
			t.Errorf("max output %d × %d streams: the cell passes the capacity check", tt.maxOut, tt.concurrency)
		}
	}
	sw := &sweeper{probe: &matrixgen.Probe{MaxModelLen: 1 << 20, KVCacheTokens: 1 << 20}}
	sw.s.Sweep.MaxOutput = 1024
	if reason := sw.overCapacity(1024, 4); reason != "" {
		t.Errorf("a cell that fits is over capacity: %s", reason)
	}
}

// onLine calls f with the log so far whenever a line containing marker is
// written.
type onLine struct {
	marker string
	f      func()
	buf    bytes.Buffer
}

func (o *onLine) Write(p []byte) (int, error) {
	n, err := o.buf.Write(p)
	if strings.Contains(string(p), o.marker) {
		o.f()
	}
	return n, err
}

// TestKilledRunLooksIncomplete: a run killed mid-sweep left not_run cells
// but no "incomplete": true. The file says incomplete from its first save
// until its last measurement.
func TestKilledRunLooksIncomplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		file := filepath.Join(t.TempDir(), "run.json")
		var seen []bool
		log := &onLine{marker: "decode 1K", f: func() {
			e, err := matrixgen.LoadFile(file)
			if err != nil {
				t.Errorf("mid-sweep the file does not load: %v", err)
				return
			}
			seen = append(seen, e.Run.Incomplete)
		}}
		run, err := Run(context.Background(), Options{Settings: testSettings(url, []string{"1K"}, []int{1, 2}, time.Second), File: file, Log: log, dial: dial})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || !seen[0] || !seen[1] {
			t.Errorf("mid-sweep the file said incomplete: %v, want true at every cell", seen)
		}
		e, err := matrixgen.LoadFile(file)
		if err != nil || run.Incomplete || e.Run.Incomplete {
			t.Errorf("the finished run says incomplete (%v)", err)
		}
	})
}
