package matrixgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestImpossibleFigures: 1e300 W passed validate, and so did more tokens
// than a cell's requests could produce. Generated at the bounds' edges: a
// figure on the bound passes, one past it is a problem naming its field.
func TestImpossibleFigures(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for trial := range 500 {
		cc, completed, maxOut := 1+rng.IntN(256), rng.IntN(1000), 1+rng.IntN(32768)
		gpus := rng.IntN(9)
		budget := TokenBudget(completed+cc, maxOut)
		tokens, tokensOver := budget-rng.IntN(budget+1), trial%2 == 1
		if tokensOver {
			tokens = budget + 1 + rng.IntN(budget)
		}
		n := float64(max(gpus, 1))
		watts, powerOver := n*MaxBoardPowerW*rng.Float64(), trial%3 == 2
		if powerOver {
			watts = n*MaxBoardPowerW*(1+1e-6) + rng.Float64()*1e300
		}
		window := 0.5 + rng.Float64()*120
		d := Decode{ContextTokens: 8192, Concurrency: cc, Status: StatusValid, OutputTokens: &tokens, Completed: &completed,
			WindowSeconds: &window, TotalTokS: new(float64(tokens) / window),
			Power: &Power{MeanPowerW: watts, EnergyJoules: watts * window, GPUs: make([]GPUWindow, gpus)}}
		fields := map[string]bool{}
		for _, p := range d.Impossible(maxOut, gpus) {
			fields[p.Field] = true
		}
		name := fmt.Sprintf("trial %d: %d tokens for %d requests of %d, %g W on %d GPUs", trial, tokens, completed+cc, maxOut, watts, gpus)
		if fields["output_tokens"] != tokensOver || fields["total_tok_s"] != tokensOver {
			t.Errorf("%s: problems %v", name, fields)
		}
		if fields["power.mean_power_w"] != powerOver || fields["power.energy_joules"] != powerOver {
			t.Errorf("%s: problems %v", name, fields)
		}
	}
	if TokenBudget(math.MaxInt/2, math.MaxInt/2) != math.MaxInt || TokenBudget(2, 10) != 2*(10+RequestTokenSlack) || TokenBudget(0, 10) != 0 {
		t.Error("TokenBudget does not hold at its edges")
	}
	// Requests past an int's reach: no bound to pass, not a negative one.
	most := math.MaxInt
	d := Decode{Concurrency: 4, Completed: &most, OutputTokens: &most}
	for _, p := range d.Impossible(1024, 0) {
		if strings.Contains(p.Msg, "-") {
			t.Errorf("%s: %s", p.Field, p.Msg)
		}
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"run-1": true, "2026-12-02_vllm.a": true,
		"": false, "../x": false, "a/b": false, ".hidden": false, "a..b": false,
		"a b": false, `a\b`: false, strings.Repeat("a", 129): false,
		// Names no folder can have on Windows:
		"CON": false, "aux.json": false, "nul": false, "COM1": false, "lpt9.x": false, "x.": false,
		"COM": true, "COM10": true, "console": true, "x.y": true,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}
