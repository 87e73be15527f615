package stats

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"

	"github.com/matrixgen/matrixgen"
)

// Phases of a measurement a comparison names.
const (
	PhaseDecode  = "decode"
	PhasePrefill = "prefill"
)

// Cell names one measurement of a run: a decode cell (context ×
// concurrency) or a prefill row (context; Concurrency 0).
type Cell struct {
	Phase       string `json:"phase"`
	Context     int    `json:"context_tokens"`
	Concurrency int    `json:"concurrency,omitempty"`
}

// String is the cell as a table shows it: "decode 8K×4", "prefill 8K".
func (c Cell) String() string {
	if c.Phase == PhasePrefill {
		return "prefill " + matrixgen.ContextLabel(c.Context)
	}
	return "decode " + matrixgen.ContextLabel(c.Context) + "×" + strconv.Itoa(c.Concurrency)
}

// Seed is the bootstrap seed of a cell's interval: fixed by the cell, so
// every build of a run draws the same resamples for it.
func (c Cell) Seed() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", c.Phase, c.Context, c.Concurrency)
	return h.Sum64()
}

// DecodeSamples are a decode cell's tokens in each second of its window, of
// every repeat in turn; empty when the run file kept none.
func DecodeSamples(d matrixgen.Decode) []float64 { return floats(DecodeSeconds(d)) }

// floats is counts as floats.
func floats(counts []int) []float64 {
	out := make([]float64, len(counts))
	for i, n := range counts {
		out[i] = float64(n)
	}
	return out
}

// DecodeSeconds are DecodeSamples as the counts they are, for a page's
// compare data (whole numbers print faster); a cell measured once gives
// its own PerSecondTokens, not a copy.
func DecodeSeconds(d matrixgen.Decode) []int {
	if len(d.Repeats) == 0 {
		return d.PerSecondTokens
	}
	var out []int
	for _, r := range d.Repeats {
		if r.Status == matrixgen.StatusValid {
			out = append(out, r.PerSecondTokens...)
		}
	}
	return out
}

// RepeatTotals are the total tok/s of a cell's valid repeats, in the
// order they were made; none where the sweep did not repeat.
func RepeatTotals(d matrixgen.Decode) []float64 {
	var out []float64
	for _, r := range d.Repeats {
		if r.Status == matrixgen.StatusValid && r.TotalTokS != nil {
			out = append(out, *r.TotalTokS)
		}
	}
	return out
}

// CompareDecode compares a decode cell of two runs by the one rule the
// gate and the compare pages share: by its repeats where both runs have
// MinRepeats valid ones (CompareRepeats: drift moves whole repeats, and
// would make the seconds inside them look significant), otherwise by its
// seconds, of every repeat (CompareCell over DecodeSamples).
func CompareDecode(a, b matrixgen.Decode) Result {
	ra, rb := RepeatTotals(a), RepeatTotals(b)
	if len(ra) >= MinRepeats && len(rb) >= MinRepeats {
		return CompareRepeats(ra, rb)
	}
	return CompareCell(DecodeSamples(a), DecodeSamples(b))
}

// PrefillSamples are a prefill row's samples: each measured request's
// prompt tokens per second.
func PrefillSamples(p matrixgen.Prefill) []float64 {
	out := make([]float64, len(p.Requests))
	for i, r := range p.Requests {
		out[i] = r.PromptTokS
	}
	return out
}

// DecodeInterval is a decode cell's interval of total tok/s and its
// confidence: of the median over 3 or more repeats (MedianInterval: drift
// shows between repeats), else of its mean from its per-second samples
// (MeanInterval). ok is false without 3 repeats or MinSeconds seconds.
func DecodeInterval(d matrixgen.Decode) (Interval, float64, bool) {
	if d.TotalTokS == nil {
		return Interval{}, 0, false
	}
	if totals := RepeatTotals(d); len(totals) >= 3 {
		return MedianInterval(totals)
	}
	cell := Cell{Phase: PhaseDecode, Context: d.ContextTokens, Concurrency: d.Concurrency}
	in, ok := MeanInterval(floats(d.PerSecondTokens), cell.Seed())
	return in, Level, ok
}

// SetInterval stores each decode cell's interval (DecodeInterval) in the
// run, once, when it is written, rather than in every build that shows it
// (the bootstrap is most of a build's arithmetic); a repeat has none of
// its own. Its low end is cut off at 0, as validation asks: a stretched
// bootstrap interval can reach below it. Every writer of run files calls it.
func SetInterval(r *matrixgen.Run) {
	for i := range r.Decode {
		d := &r.Decode[i]
		d.Interval = nil
		if in, level, ok := DecodeInterval(*d); ok {
			d.Interval = &matrixgen.Interval{Low: max(0, in.Low), High: max(0, in.High), Level: level}
		}
		for j := range d.Repeats {
			d.Repeats[j].Interval = nil
		}
	}
}

// PrefillInterval is a prefill row's interval of prompt tok/s from its
// requests (MedianInterval); ok is false without 3 requests.
func PrefillInterval(p matrixgen.Prefill) (Interval, float64, bool) {
	if p.PromptTokS == nil {
		return Interval{}, 0, false
	}
	return MedianInterval(PrefillSamples(p))
}

// Row is one cell of two runs compared.
type Row struct {
	Cell Cell `json:"cell"`
	// A and B are the runs' own figures (total tok/s of a decode cell, its
	// median repeat's where it was repeated; prompt tok/s of a prefill
	// row).
	A float64 `json:"a"`
	B float64 `json:"b"`
	// Test is the test the cell was put to (CompareDecode), TestNone for
	// a cell not tested. DF is the t test's degrees of freedom.
	Test string `json:"test"`
	DF   int    `json:"df,omitempty"`
	// SamplesA and SamplesB are how many samples each run had for the
	// test: repeats for TestRepeats; seconds, or a prefill row's
	// requests, for TestSamples.
	SamplesA int `json:"samples_a"`
	SamplesB int `json:"samples_b"`
	// Ratio is B / A (0.9: B 10 % slower); none (0, absent from JSON),
	// untested and out of the geometric mean, with 0 tok/s in either run.
	Ratio float64 `json:"ratio,omitzero"`
	// P is the cell's own two-sided p (CompareDecode); null where no test
	// could be made (not InFamily). Differ is P below Alpha in the
	// direction the ratio points, the verdict its compare page shows.
	// Against is P below Alpha with the test finding B on the other side
	// of A than the ratio (of median repeats) shows: neither gain nor loss.
	P       *float64 `json:"p"`
	Differ  bool     `json:"differ"`
	Against bool     `json:"against"`
	// MinP is the smallest p the cell's sizes could give (0 for a t test);
	// InFamily is the cell being tested, in the family the gate corrects for.
	MinP     float64 `json:"min_p"`
	InFamily bool    `json:"in_family"`
	// PAdjusted is P corrected for the size of the family (Holm), null
	// outside it; SignificantAfterHolm, what the gate reads, is PAdjusted
	// below Alpha and the test not Against the ratio.
	PAdjusted            *float64 `json:"p_adjusted"`
	SignificantAfterHolm bool     `json:"significant_after_holm"`
	// Verdict is the cell's verdict in words, as `matrixgen compare`
	// prints it (one of the Verdict constants).
	Verdict string `json:"verdict"`
}

// The verdicts of a row (Row.Verdict). "~" is only ever a test's answer:
// a cell that could not be tested says so.
const (
	VerdictFaster = "faster"
	VerdictSlower = "slower"
	// VerdictSame is a cell tested and not found different at Alpha.
	VerdictSame = "~"
	// VerdictAgainst is a cell whose test found a difference on the other
	// side of A than its ratio shows: neither a gain nor a loss.
	VerdictAgainst = "~ (against)"
	// VerdictUntested is a cell no test could be made of: no ratio (0
	// tok/s in a run), a run kept no samples there, or too few samples
	// to ever reach Alpha.
	VerdictUntested = "untested"
)

// Change is the row's change as a share: −0.1 for 10 % slower;
// meaningless where the row has no ratio (HasRatio).
func (r Row) Change() float64 { return r.Ratio - 1 }

// HasRatio reports whether both figures are above 0, so B / A means
// something.
func (r Row) HasRatio() bool { return r.Ratio > 0 }

// Tested reports whether the cell was tested (a ratio, and samples enough
// in both runs), so in the gate's family.
func (r Row) Tested() bool { return r.InFamily }

// Table is two runs compared cell by cell.
type Table struct {
	Rows []Row `json:"rows"`
	// GeoMean is the geometric mean of every row's ratio, tested or not,
	// the typical change; 0 when none has one.
	GeoMean float64 `json:"geomean,omitempty"`
	// Family is how many rows could reach significance at all, the family
	// Holm's correction holds to 5 %; 0: nothing could be tested.
	Family int `json:"family"`
}

// CompareRuns compares every measurement valid in both runs: decode cells
// by total tok/s (CompareDecode), prefill rows by prompt tok/s and their
// requests (CompareCell). Each row carries its own verdict, as its compare
// page, and for the gate its p corrected (Holm) for the family of rows that
// could reach 5 % at all.
func CompareRuns(a, b *matrixgen.Run) Table {
	var t Table
	prefillB := make(map[int][]int, len(b.Prefill)) // context to b's rows, in order
	for j := range b.Prefill {
		prefillB[b.Prefill[j].ContextTokens] = append(prefillB[b.Prefill[j].ContextTokens], j)
	}
	for _, pa := range a.Prefill {
		for _, j := range prefillB[pa.ContextTokens] {
			if pb := b.Prefill[j]; bothValid(pa.Status, pb.Status) && pa.PromptTokS != nil && pb.PromptTokS != nil {
				t.Rows = append(t.Rows, row(Cell{Phase: PhasePrefill, Context: pa.ContextTokens},
					*pa.PromptTokS, *pb.PromptTokS, CompareCell(PrefillSamples(pa), PrefillSamples(pb))))
			}
		}
	}
	cellsB := b.CellIndex() // one scan of b, not one per cell of a
	for i := range a.Decode {
		da := &a.Decode[i]
		db, ok := cellsB.Cell(da.ContextTokens, da.Concurrency)
		if ok && bothValid(da.Status, db.Status) && da.TotalTokS != nil && db.TotalTokS != nil {
			t.Rows = append(t.Rows, row(Cell{Phase: PhaseDecode, Context: da.ContextTokens, Concurrency: da.Concurrency},
				*da.TotalTokS, *db.TotalTokS, CompareDecode(*da, db)))
		}
	}
	slices.SortStableFunc(t.Rows, func(x, y Row) int {
		return cmp.Or(cmp.Compare(y.Cell.Phase, x.Cell.Phase), // prefill first
			cmp.Compare(x.Cell.Context, y.Cell.Context), cmp.Compare(x.Cell.Concurrency, y.Cell.Concurrency))
	})
	t.Family = holm(t.Rows)
	ratios := make([]float64, 0, len(t.Rows))
	for _, r := range t.Rows {
		if r.HasRatio() {
			ratios = append(ratios, r.Ratio)
		}
	}
	t.GeoMean, _ = GeoMean(ratios)
	return t
}

func bothValid(a, b matrixgen.Status) bool {
	return a == matrixgen.StatusValid && b == matrixgen.StatusValid
}

// row is a cell of two runs: their figures a and b and the cell's test,
// none without a ratio (a figure of 0).
func row(c Cell, a, b float64, cell Result) Row {
	r := Row{Cell: c, A: a, B: b, Test: cell.Test, DF: cell.DF, SamplesA: cell.NA, SamplesB: cell.NB, Verdict: VerdictUntested}
	if cell.Test == TestSamples {
		r.MinP = MinP(cell.NA, cell.NB)
	}
	// Figures so tiny (a hostile file's 5e-324) that B / A overflows or
	// underflows have no ratio either: an infinite one broke the JSON and
	// the geometric mean, a zero one hid a cell from the family.
	if q := b / a; a > 0 && b > 0 && q > 0 && !math.IsInf(q, 0) {
		r.Ratio = q
	}
	if r.Ratio == 0 || !cell.Tested {
		r.Test, r.DF = TestNone, 0
		return r
	}
	r.P, r.InFamily = &cell.P, true
	shown := Direction(r.Ratio)
	r.Differ = cell.Significant && shown != 0 && shown == cell.Direction
	r.Against = cell.Significant && shown != 0 && shown != cell.Direction
	switch {
	case r.Against:
		r.Verdict = VerdictAgainst
	case !r.Differ:
		r.Verdict = VerdictSame
	case shown < 0:
		r.Verdict = VerdictSlower
	default:
		r.Verdict = VerdictFaster
	}
	return r
}

// PValue is the row's p; 1 where it was not tested.
func (r Row) PValue() float64 {
	if r.P == nil {
		return 1
	}
	return *r.P
}

// Direction is the way a ratio B / A points: 1 above 1, −1 below, 0 at 1.
func Direction(ratio float64) int {
	switch {
	case ratio > 1:
		return 1
	case ratio < 1:
		return -1
	}
	return 0
}

// holm sets PAdjusted and SignificantAfterHolm of the family's m rows by
// Holm's step-down correction (the k-th smallest p times m − k + 1, none
// below the one before it), and returns m.
func holm(rows []Row) int {
	var family []int
	for i, r := range rows {
		if r.InFamily {
			family = append(family, i)
		}
	}
	slices.SortStableFunc(family, func(x, y int) int { return cmp.Compare(*rows[x].P, *rows[y].P) })
	m, floor := len(family), 0.0
	for k, i := range family {
		adjusted := max(floor, min(1, float64(m-k)*(*rows[i].P)))
		floor = adjusted
		rows[i].PAdjusted = &adjusted
		rows[i].SignificantAfterHolm = adjusted < Alpha && !rows[i].Against
	}
	return m
}

// Slowdowns are the rows the regression gate fails on at beyond (FailsGate).
func (t Table) Slowdowns(beyond float64) []Row {
	return slices.DeleteFunc(slices.Clone(t.Rows), func(r Row) bool { return !r.FailsGate(beyond) })
}

// FailsGate reports whether the row alone fails a gate at beyond.
func (r Row) FailsGate(beyond float64) bool {
	return r.SignificantAfterHolm && Beyond(r.Ratio, beyond)
}

// Beyond reports whether a ratio B / A (0: none) is a slowdown of more
// than share (0.05: 5 %). Exactly share is not, though 95 / 100 is a hair
// past it in floating point: the tolerance is below any change tok/s show.
func Beyond(ratio, share float64) bool {
	const tolerance = 1e-9
	return ratio > 0 && 1-ratio > share+tolerance
}
