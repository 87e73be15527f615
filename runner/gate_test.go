package runner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/sim"
	"github.com/matrixgen/matrixgen/stats"
)

// noisyProfile is testProfile with its speed wandering as a shared machine's
// does: ±3 % from one quarter second to the next, and a slow swing of ±1 %
// over ten minutes, seeded.
func noisyProfile(seed uint64) sim.Profile {
	p := testProfile()
	p.Noise = sim.NoiseProfile{Seed: seed, JitterShare: 0.03, JitterSeconds: 0.25, DriftShare: 0.01, DriftPeriodSeconds: 600}
	return p
}

// gateSeeds is how many pairs of runs the gate is held to: all of seeds 1
// to gateSeeds, none left out.
const gateSeeds = 10

// noisySweep sweeps 2 contexts × 3 concurrency levels of 20 s windows of
// a noisy sim in virtual time.
func noisySweep(t *testing.T, seed uint64) *matrixgen.Run {
	var run *matrixgen.Run
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, noisyProfile(seed))
		run, _ = sweepWith(t, testSettings(url, []string{"1K", "4K"}, []int{1, 4, 16}, 20*time.Second), dial)
	})
	return run
}

// slowed is run with one decode cell made 10 % slower: its rate and every
// second of its samples.
func slowed(run *matrixgen.Run, context, concurrency int) *matrixgen.Run {
	s := *run
	s.Decode = append([]matrixgen.Decode(nil), run.Decode...)
	for i := range s.Decode {
		d := &s.Decode[i]
		if d.ContextTokens != context || d.Concurrency != concurrency {
			continue
		}
		*d = slowDecode(*d, 0.9)
	}
	return &s
}

// TestGateAgainstKnownTruth holds `matrixgen compare -fail-on 5%` to a noisy
// sim whose truth is known (10 pairs; 2 with -short). Two runs of the same server with different
// noise seeds differ by nothing real: the gate must pass on every pair, and
// few tables may call any cell significant (the stated rate is 5 %).
// With one cell 10 % slower, the gate must fail on that cell in every pair.
func TestGateAgainstKnownTruth(t *testing.T) {
	seeds := uint64(gateSeeds)
	if testing.Short() {
		seeds = 2
	}
	const slowContext, slowConcurrency = 4096, 4
	cells, falseCells, falseTables, gateFails, caught := 0, 0, 0, 0, 0
	for seed := uint64(1); seed <= seeds; seed++ {
		a, b := noisySweep(t, 2*seed-1), noisySweep(t, 2*seed)
		table := stats.CompareRuns(a, b)
		if table.Family == 0 {
			t.Fatal("no cell was tested: the runs kept no samples")
		}
		anySignificant := false
		for _, r := range table.Rows {
			if !r.Tested() {
				continue
			}
			cells++
			if r.PValue() < stats.Alpha {
				falseCells++
			}
			anySignificant = anySignificant || r.SignificantAfterHolm
		}
		if anySignificant {
			falseTables++
		}
		if len(table.Slowdowns(0.05)) > 0 {
			gateFails++
		}
		slow := stats.CompareRuns(a, slowed(b, slowContext, slowConcurrency))
		for _, r := range slow.Slowdowns(0.05) {
			if r.Cell == (stats.Cell{Phase: stats.PhaseDecode, Context: slowContext, Concurrency: slowConcurrency}) {
				caught++
			}
		}
	}
	t.Logf("no real difference: %d of %d cells significant on their own (p < 0.05), %d of %d tables with any significant cell after Holm, gate failed %d of %d",
		falseCells, cells, falseTables, seeds, gateFails, seeds)
	t.Logf("one cell 10 %% slower: caught in %d of %d pairs", caught, seeds)
	if gateFails > 0 {
		t.Errorf("the gate failed %d of %d pairs with no real difference", gateFails, seeds)
	}
	// The stated family rate is 5 %: ½ a table in 10. The bound is 20 %,
	// so chance alone fails it about 1 time in 100 (3 or more of 10 at
	// 5 %), while a table tested without the correction (8 cells at 5 %
	// each: a third of tables) fails it.
	if allowed := max(1, int(seeds)/5); falseTables > allowed {
		t.Errorf("%d of %d tables called a cell significant with no real difference (at most %d)", falseTables, seeds, allowed)
	}
	if caught != int(seeds) {
		t.Errorf("the 10 %% slowdown was caught in %d of %d pairs", caught, seeds)
	}
}
