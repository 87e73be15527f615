package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/stats"
)

var compareCommand = command{
	args:    true,
	summary: "compare two runs cell by cell, and fail on a significant slowdown",
	usage: `
Usage: matrixgen compare <A> <B> [options]

A and B are run files, ids of runs in the -runs folder (a local folder or
a bucket URL), or run files in a bucket (s3://lab/runs/<id>.json). Every cell and
prefill row valid in both is set side by side: A's figure, B's, the change,
its p, its test and its verdict. A decode cell measured twice or more in
both runs (-repeat) is tested over its repeats, by Student's two-sample t
on each repeat's tok/s ("t"): drift on a machine moves whole repeats, and
would make the seconds inside them look significant when nothing changed.
Any other cell is tested by a two-sided Mann–Whitney U on the samples
inside it ("U": its tokens in each second of its window, of every repeat,
or its prefill requests' rates). The verdict is the cell's own, at
p < 0.05, the same as its compare page's: faster or slower where the
difference is significant, "~" where it was tested and is not, "~
(against)" where the test finds B on the other side of A than the figures
shown (a median repeat against the repeats' mean): neither. "untested"
is a cell no test could be made of: a run kept no samples there, too few
to ever reach p < 0.05, or a figure of 0 tok/s (no ratio). The table's
last row, geomean, is the geometric mean of every ratio, prefill rows
and decode cells alike, tested or not; the output's last line counts the
cells that differ and, with -fail-on, says pass or fail.

The gate (Holm) column is the regression gate's view: a cell's p corrected
by Holm's method over the family of cells whose sample sizes can reach
p < 0.05 at all (a cell tested by t always can; 3 samples against 3
never can by U: the smallest p they can give is 0.1), so that when nothing changed the chance that the gate calls
any cell significant is at most 5 %. "!" marks a cell that fails -fail-on,
"*" one significant after the correction that does not, "–" one outside
the family (untested); blank, one in the family but not significant after
the correction.

Runs of different models, GPUs, engines or context lengths are compared
all the same, with a warning on stderr naming what differs.

-fail-on takes a percentage from 0 up to 100, with or without "%": 5 and
5% both fail on a slowdown of more than 5 % (95 against 100 is not).
Given empty (an unset variable in a script) or as -0, it is a mistake
(exit 2), not a gate that never fails.

Exit status:
  0  no slowdown beyond -fail-on is significant after the correction
     (or no -fail-on)
  1  a significant slowdown beyond -fail-on; or, with -fail-on, a cell
     valid in A that B holds with another status (an error, over
     capacity, not run: B stopped early), listed as lost
  2  a command line it cannot understand, A and B one run, or two
     copies of one file (a gate that compared nothing must not pass)
  3  -fail-on given but nothing could be tested: no cell of both runs has
     samples enough to reach p < 0.05 (runs without per-second samples,
     or too few of them)
  4  a run could not be read: no such file or id, a malformed file, a
     bucket that did not answer
`,
	examples: `
  matrixgen compare runs/before.json runs/after.json
  matrixgen compare before after -format markdown >> comment.md
  matrixgen compare before after -fail-on 5%
  matrixgen compare -runs 's3://lab/runs/?region=eu-west-1' before after
`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		runs := fs.String("runs", "runs", "runs `folder` or bucket URL that ids name runs in")
		format := fs.String("format", "text", "output `format`: text, markdown or json")
		failOn := fs.String("fail-on", "", "exit 1 on a slowdown beyond this `percentage` (5 or 5%), significant after Holm's correction; not given: never")
		return func(args []string, stdout, stderr io.Writer) error {
			if len(args) != 2 {
				return usagef("name two runs to compare, A and B")
			}
			write, ok := map[string]func(io.Writer, compareReport) error{
				"json": writeCompareJSON, "markdown": writeCompareMarkdown, "text": writeCompareText}[*format]
			if !ok {
				return usagef("-format: want text, markdown or json, not %q", *format)
			}
			beyond, gate, err := parsePercent(*failOn, flagSet(fs, "fail-on"))
			if err != nil {
				return usagef("-fail-on: %v", err)
			}
			if args[0] == args[1] {
				return usagef("A and B are one run (%s): name two runs", term.Name(args[0]))
			}
			if err := checkPlaces(*runs, args[0], args[1]); err != nil {
				return err
			}
			var ab [2]runfile.Entry
			for i := range ab {
				if ab[i], err = loadCompared(*runs, args[i]); err != nil {
					return unreadable(err)
				}
			}
			a, b := ab[0], ab[1]
			// Two names or two copies of one file: nothing to compare.
			if a.Raw != nil && (bytes.Equal(a.Raw, b.Raw) || sameContent(a.Run, b.Run)) {
				if a.ID != b.ID {
					return usagef("A and B are one measurement (%s and %s hold the same run): name two runs", term.Name(args[0]), term.Name(args[1]))
				}
				return usagef("A and B are one run (%s as %s and %s): name two runs", a.ID, term.Name(args[0]), term.Name(args[1]))
			}
			rep := compareReport{A: a.ID, B: b.ID, Table: stats.CompareRuns(a.Run, b.Run), Gate: gate, Beyond: beyond,
				Warnings: append(unrelated(a.Run, b.Run), incompleteRuns(a.Run, b.Run)...)}
			rep.Lost, rep.NotCompared = cellsApart(a.Run, b.Run, rep.Table)
			for _, w := range rep.Warnings {
				fmt.Fprintln(stderr, "warning: "+w)
			}
			if err := write(stdout, rep); err != nil || !gate {
				return err
			}
			var failed []string
			if len(rep.Lost) > 0 {
				failed = append(failed, fmt.Sprintf("%s valid in A not valid in B: %s",
					plural.Count(len(rep.Lost), "cell", "cells"), firstFew(rep.Lost, ", ")))
			}
			if slow := rep.Table.Slowdowns(beyond); len(slow) > 0 {
				names := make([]string, len(slow))
				for i, r := range slow {
					names[i] = fmt.Sprintf("%s %s", r.Cell, percent(r.Change()))
				}
				failed = append(failed, fmt.Sprintf("%s significantly slower (after Holm's correction over %s) by more than %s: %s",
					plural.Count(len(slow), "cell", "cells"), plural.Count(rep.Table.Family, "cell", "cells"),
					plainPercent(beyond), strings.Join(names, ", ")))
			}
			if len(failed) > 0 {
				return errors.New(strings.Join(failed, "; "))
			}
			if rep.Table.Family == 0 {
				// Exit 3: passing would claim a check that never happened.
				return exitError{errors.New(nothingWhy(rep.Table)), exitUntestable}
			}
			return nil
		}
	},
}

// incompleteRuns warns of a run whose sweep stopped before it finished: a
// peak of 16 streams it never ran reads as a loss.
func incompleteRuns(a, b *matrixgen.Run) []string {
	var warnings []string
	for i, r := range []*matrixgen.Run{a, b} {
		if r.Incomplete {
			warnings = append(warnings, "run "+[]string{"A", "B"}[i]+" is incomplete: its sweep stopped before it finished (matrixgen run -resume continues it); "+
				"its cells not reached read Not run, and its headline figures cover only what it measured")
		}
	}
	return warnings
}

// sameContent reports whether two runs hold the same measurement, however
// their files are laid out (pretty-printed or minified by a CI pipeline).
func sameContent(a, b *matrixgen.Run) bool {
	x, errA := runfile.Encode(a)
	y, errB := runfile.Encode(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// unreadable marks err as a run compare could not read: it exits 4, so a
// CI job tells a pipeline that lost its run file from a regression (1). A
// mistake in the command line (a bucket URL that names no file) stays one.
func unreadable(err error) error {
	if e, _ := errors.AsType[exitError](err); e.code == exitUsage {
		return err
	}
	return exitError{err, exitUnreadable}
}

func nothingWhy(t stats.Table) string {
	if len(t.Rows) == 0 {
		return "nothing to test: the two runs have no cell or prefill row valid in both"
	}
	noSamples, noRatio := 0, 0
	for _, r := range t.Rows {
		switch {
		case !r.HasRatio():
			noRatio++
		case r.SamplesA == 0 || r.SamplesB == 0:
			noSamples++
		}
	}
	return fmt.Sprintf("nothing could be tested: of %s valid in both runs, none has samples enough in both to reach p < %g "+
		"(%d kept no per-second samples or requests in a run; %d had 0 tok/s in a run, so no ratio; the others have too few: a cell needs "+
		"%d repeats a side, or %d samples or more a side and sizes whose smallest possible p is below %g, so 3 against 3, whose smallest is 0.1, never can)",
		plural.Count(len(t.Rows), "cell", "cells"), stats.Alpha, noSamples, noRatio, stats.MinRepeats, stats.MinSamples, stats.Alpha)
}

// parsePercent reads -fail-on, "5" or "5%", as a share (0.05); not given,
// no gate. Empty (an unset variable in a CI script) or "-0" is a mistake:
// a gate that silently does not run would pass every change.
func parsePercent(s string, given bool) (share float64, set bool, err error) {
	if !given {
		return 0, false, nil
	}
	text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	v, err := strconv.ParseFloat(text, 64)
	if text == "" {
		return 0, false, errors.New("want a percentage from 0 up to 100 (5 or 5%), not an empty value; leave -fail-on out for no gate")
	}
	if err != nil || strings.ContainsAny(text, "%xXpP_-") || !(v >= 0) || v >= 100 {
		return 0, false, fmt.Errorf("want a percentage from 0 up to 100 (5 or 5%%), not %q", s)
	}
	return v / 100, true, nil
}

// loadCompared reads a run named by its file, its id in the runs folder,
// or its place in a bucket (a URL to the file, or an id with -runs a URL).
func loadCompared(runs, name string) (runfile.Entry, error) {
	switch {
	case bucket.IsURL(name):
		u, err := url.Parse(name)
		if err != nil || !strings.HasSuffix(u.Path, ".json") {
			return runfile.Entry{}, usagef("%s: name the run file in the bucket (…/<id>.json)", bucket.Redact(name))
		}
		folder, key := splitRunURL(u)
		return fetchRun(folder, key)
	case bucket.IsURL(runs) && !strings.HasSuffix(name, ".json"):
		return fetchRun(runs, name+".json")
	}
	file, isFile := name, strings.HasSuffix(name, ".json")
	if _, err := os.Stat(name); err != nil {
		// An id, or a file's name in the runs folder.
		inRuns := filepath.Join(runs, name)
		if !isFile {
			inRuns += ".json"
		}
		if _, err := os.Stat(inRuns); err == nil || !isFile {
			file = inRuns
		}
	}
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		switch {
		case isFile && filepath.Clean(filepath.Dir(name)) == filepath.Clean(runs):
			return runfile.Entry{}, fmt.Errorf("no run file %s", term.Name(name))
		case isFile:
			return runfile.Entry{}, fmt.Errorf("no run file %s: neither that file nor %s in the runs folder %s (-runs)",
				term.Name(name), term.Name(filepath.Base(name)), term.Name(runs))
		}
		return runfile.Entry{}, fmt.Errorf("no run %s: neither a file of that name nor %s in the runs folder %s (-runs)",
			term.Name(name), term.Name(name+".json"), term.Name(runs))
	}
	return runfile.Load(file) // its ID the file's name
}

func fetchRun(place, key string) (runfile.Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := bucket.Open(ctx, place)
	if err != nil {
		return runfile.Entry{}, err
	}
	defer store.Close()
	data, found, err := store.Get(ctx, key)
	if err != nil || !found {
		return runfile.Entry{}, cmp.Or(err, fmt.Errorf("%s has no %s", store, term.Name(key)))
	}
	shown := strings.TrimSuffix(store.String(), "/") + "/" + key
	run, err := runfile.Decode(shown, data)
	if err != nil {
		return runfile.Entry{}, err
	}
	return runfile.Entry{ID: strings.TrimSuffix(key, ".json"), Run: run, Raw: data}, nil
}

// percent is a share as a signed percentage: "-10.0 %"; a change that
// rounds to nothing is "+0.0 %", never "-0.0 %"; past a million percent
// (B of 342 tok/s over A of 1e-300), three significant digits, not 300.
func percent(share float64) string {
	p := math.Round(1000*share) / 10
	if p == 0 {
		p = 0 // -0 prints as "-0.0"
	}
	if math.Abs(p) >= 1e6 {
		return fmt.Sprintf("%+.3g %%", p)
	}
	return fmt.Sprintf("%+.1f %%", p)
}

// compareReport is what compare prints, in any format.
type compareReport struct {
	A, B        string
	Table       stats.Table
	Gate        bool    // -fail-on given
	Beyond      float64 // -fail-on's share
	Warnings    []string
	NotCompared []string // the cells of either run without a row (cellsApart)
	Lost        []string // cellsApart: a gate fails on them
}

// compareRows are the table's rows, every column in one format; p, test
// and gate are "–" for a row outside the family (untested).
func (rep compareReport) compareRows() [][]string {
	t := rep.Table
	rows := make([][]string, 0, len(t.Rows)+1)
	for _, r := range t.Rows {
		change := "no ratio"
		if r.HasRatio() {
			change = percent(r.Change())
		}
		p, test, gate := "–", "–", "–"
		if r.InFamily {
			p, test, gate = strconv.FormatFloat(*r.P, 'f', 3, 64), "U", ""
			if *r.P < 0.001 {
				p = "<0.001"
			}
			if r.Test == stats.TestRepeats {
				test = "t"
			}
			if rep.Gate && r.FailsGate(rep.Beyond) {
				gate = "!"
			} else if r.SignificantAfterHolm {
				gate = "*"
			}
		}
		rows = append(rows, []string{r.Cell.String(), rate(r.A), rate(r.B), change, p, test,
			fmt.Sprintf("%d+%d", r.SamplesA, r.SamplesB), r.Verdict, gate})
	}
	if t.GeoMean > 0 {
		rows = append(rows, []string{"geomean", "", "", percent(t.GeoMean - 1), "", "", "", "", ""})
	}
	return rows
}

func rate(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// compareHeader is the table's header; the runs' ids, which can be long,
// go above it (runsLine).
func compareHeader() []string {
	return []string{"cell", "A tok/s", "B tok/s", "change", "p", "test", "n A+B", "verdict", "gate (Holm)"}
}

func runsLine(a, b string) string { return "A: " + term.Name(a) + "\nB: " + term.Name(b) + "\n" }

func (rep compareReport) legend() string {
	gate := "no -fail-on given"
	if rep.Gate {
		gate = "! fails -fail-on " + plainPercent(rep.Beyond)
	}
	return fmt.Sprintf("test: t, Student's two-sample t (variance pooled) over the cell's repeats, where both runs measured it %d times or more (n: repeats); "+
		"U, two-sided Mann–Whitney U over its samples otherwise (n: seconds of every repeat, or prefill requests).\n"+
		"verdict: p < %g for the cell on its own (as its compare page marks it), faster or slower as its ratio points; "+
		"~ tested and not significant; ~ (against) where the test finds the difference on the other side of the ratio; "+
		"untested where no test could be made (a run kept no samples, too few to reach p < %g, or no ratio: a figure of 0).\n"+
		"gate (Holm): p corrected by Holm's method over the family of %s that can reach p < %g; %s; * significant after the correction; "+
		"blank not significant after it; – outside the family (untested). geomean: every ratio, prefill rows included.",
		stats.MinRepeats, stats.Alpha, stats.Alpha, plural.Count(rep.Table.Family, "cell", "cells"), stats.Alpha, gate)
}

// summary is the output's last line: "2 of 8 cells differ, 2 untested;
// none slower by more than 5 % after Holm's correction: pass".
func (rep compareReport) summary() string {
	t := rep.Table
	differ := 0
	for _, r := range t.Rows {
		if r.Differ {
			differ++
		}
	}
	line := fmt.Sprintf("%d of %s differ", differ, plural.Count(len(t.Rows), "cell", "cells"))
	if untested := len(t.Rows) - t.Family; untested > 0 {
		line += fmt.Sprintf(", %d untested", untested)
	}
	if len(rep.Lost) > 0 {
		line += fmt.Sprintf(", %d valid in A not valid in B", len(rep.Lost))
	}
	slow := t.Slowdowns(rep.Beyond)
	by := " slower by more than " + plainPercent(rep.Beyond) + " after Holm's correction"
	switch lost := len(rep.Lost) > 0; {
	case !rep.Gate:
		return line + "; no gate (-fail-on not given)"
	case lost && t.Family == 0:
		return line + "; nothing could be tested: fail"
	case lost && len(slow) == 0:
		return line + "; none" + by + ", but cells lost: fail"
	case t.Family == 0:
		return line + "; nothing could be tested: no pass"
	case len(slow) == 0:
		return line + "; none" + by + ": pass"
	}
	return line + "; " + strconv.Itoa(len(slow)) + by + ": fail"
}

func eachCell(r *matrixgen.Run, f func(c stats.Cell, s matrixgen.Status, reason string)) {
	for _, p := range r.Prefill {
		f(stats.Cell{Phase: stats.PhasePrefill, Context: p.ContextTokens}, p.Status, p.Reason)
	}
	for _, d := range r.Decode {
		f(stats.Cell{Phase: stats.PhaseDecode, Context: d.ContextTokens, Concurrency: d.Concurrency}, d.Status, d.Reason)
	}
}

// plainPercent is a share as a percentage without needless decimals: "2.5 %".
func plainPercent(share float64) string {
	return strconv.FormatFloat(math.Round(share*1e8)/1e6, 'f', -1, 64) + " %"
}

// cellLines are the lines under the table, each only where it has cells
// (what they are, how many, and the first few): the cells lost, passed
// through clean (they quote B's reasons), and those not compared.
func (rep compareReport) cellLines(clean func(string) string) []string {
	var lines []string
	add := func(what string, cells []string, clean func(string) string) {
		if len(cells) > 0 {
			n := plural.Count(len(cells), "cell", "cells")
			lines = append(lines, clean(fmt.Sprintf("%s: %s: %s", what, n, firstFew(cells, "; "))))
		}
	}
	add("lost in B (valid in A, not in B; -fail-on fails on them)", rep.Lost, clean)
	add("not compared (a figure is compared where both runs are Valid)", rep.NotCompared,
		func(s string) string { return s })
	return lines
}

// firstFew joins the first lines of a list and counts the rest: a run may
// lose thousands of cells.
func firstFew(lines []string, sep string) string {
	const shown = 5
	text := strings.Join(lines[:min(shown, len(lines))], sep)
	if len(lines) > shown {
		text += fmt.Sprintf("%sand %d more", sep, len(lines)-shown)
	}
	return text
}

func writeCompareText(w io.Writer, rep compareReport) error {
	io.WriteString(w, runsLine(rep.A, rep.B)+"\n")
	align := []int{-1, 1, 1, 1, 1, -1, 1, -1, -1} // numbers right, text left (a negative width)
	rows := append([][]string{compareHeader()}, rep.compareRows()...)
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var text string // columns two spaces apart; fmt pads by characters
	for _, row := range rows {
		line := ""
		for i, c := range row {
			line += fmt.Sprintf("%*s  ", align[i]*widths[i], c)
		}
		text += strings.TrimRight(line, " ") + "\n"
	}
	text += rep.legend() + "\n"
	for _, line := range rep.cellLines(term.Clean) {
		text += line + "\n"
	}
	text += rep.summary() + "\n"
	_, err := io.WriteString(w, text)
	return err
}

// splitRunURL is a run file's bucket URL as its folder's URL, ending in one
// "/" (path.Dir of a key at the bucket's root is "/"), and the file's key.
func splitRunURL(u *url.URL) (folder, key string) {
	dir := *u
	dir.Path = strings.TrimSuffix(path.Dir(u.Path), "/") + "/"
	return dir.String(), path.Base(u.Path)
}

// markdownText is text from run files as Markdown that shows it as
// written: every character Markdown or its HTML could read as markup is
// escaped, so a model named "[link](http://…) <img …>" stays text.
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()<>#+-.!|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func writeCompareMarkdown(w io.Writer, rep compareReport) error {
	var sb strings.Builder
	line := func(cells []string) {
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
		}
		sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	sb.WriteString(strings.ReplaceAll(runsLine("`"+rep.A+"`", "`"+rep.B+"`"), "\n", "  \n") + "\n")
	for _, warning := range rep.Warnings {
		sb.WriteString("Warning: " + markdownText(warning) + "\n\n")
	}
	line(compareHeader())
	sb.WriteString("|---|--:|--:|--:|--:|:-:|--:|---|:-:|\n")
	for _, r := range rep.compareRows() {
		line(r)
	}
	sb.WriteString("\n" + strings.ReplaceAll(rep.legend(), "\n", "  \n") + "\n")
	for _, l := range rep.cellLines(markdownText) {
		sb.WriteString("\n" + l + "\n")
	}
	sb.WriteString("\n**" + rep.summary() + "**\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

func writeCompareJSON(w io.Writer, rep compareReport) error {
	out := struct {
		A           string      `json:"a"`
		B           string      `json:"b"`
		Alpha       float64     `json:"alpha"`
		Test        string      `json:"test"`
		FailOn      *float64    `json:"fail_on"`
		Warnings    []string    `json:"warnings"`
		Table       stats.Table `json:"table"`
		NotCompared []string    `json:"not_compared"`
		Lost        []string    `json:"lost"`
	}{rep.A, rep.B, stats.Alpha, "per cell: t (student's two-sample t, variance pooled) over its repeats where both runs have 2 or more, " +
		"else mann-whitney-u two-sided over its samples; each row's test says which; gate: holm over the cells that can reach alpha", nil,
		append([]string{}, rep.Warnings...), rep.Table, append([]string{}, rep.NotCompared...), append([]string{}, rep.Lost...)}
	if rep.Gate {
		out.FailOn = &rep.Beyond
	}
	// Marshalled whole first: an error leaves stdout empty, not half a document.
	data, err := json.Marshal(out, jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// unrelated names what differs between two runs that should be of one
// setup, what each request carried included (thinking on or off, say).
func unrelated(a, b *matrixgen.Run) []string {
	var diffs []string
	differ := func(what, x, y string) {
		if x != y {
			diffs = append(diffs, fmt.Sprintf("%s (%s vs %s)", what, orNone(x), orNone(y)))
		}
	}
	differ("model", a.Model.Name, b.Model.Name)
	if x, y := gpuOf(a), gpuOf(b); x != y {
		diffs = append(diffs, fmt.Sprintf("GPU (%s vs %s)", x, y))
	}
	differ("engine", strings.TrimSpace(a.Engine.Name+" "+a.Engine.Version), strings.TrimSpace(b.Engine.Name+" "+b.Engine.Version))
	differ("contexts", contextSet(a), contextSet(b))
	differ("request", cmp.Or(clipped(a.Request.Text()), "none"), cmp.Or(clipped(b.Request.Text()), "none"))
	if len(diffs) == 0 {
		return nil
	}
	return []string{"A and B are runs of different setups, compared all the same: they differ in " + strings.Join(diffs, ", ")}
}

// maxRequestText bounds a request in a warning: a run file may hold
// megabytes in its extra fields.
const maxRequestText = 300

// clipped is s cut to maxRequestText bytes on a character boundary.
func clipped(s string) string {
	if len(s) <= maxRequestText {
		return s
	}
	return strings.ToValidUTF8(s[:maxRequestText], "") + "…" // a decoded run's text is valid UTF-8
}

// gpuOf is a run's GPU as a warning names it: a simulated run without one
// ran on the sim.
func gpuOf(r *matrixgen.Run) string {
	if r.Simulated && r.Hardware.GPU == "" {
		return "matrixgen sim"
	}
	return orNone(r.Hardware.GPU)
}

// orNone is a name as the terminal shows it, "none" for no name (term.Name
// quotes an empty one).
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return term.Name(s)
}

// contextSet is a run's context lengths, in order: "1K 8K 32K".
func contextSet(r *matrixgen.Run) string {
	var cs []int
	eachCell(r, func(c stats.Cell, _ matrixgen.Status, _ string) { cs = append(cs, c.Context) })
	slices.Sort(cs)
	return strings.Join(contextLabels(slices.Compact(cs)), " ")
}

// cellsApart names the measurements of either run without a row. Lost
// are those valid in A that B holds with another status, each with B's
// status and reason: a server that now fails a cell it served is a
// regression no ratio shows. The others are not compared, with each run's
// status there: "decode 8K×4 (A Valid, B Requests queued)"; a cell B never
// planned is not lost, only not compared.
func cellsApart(a, b *matrixgen.Run, t stats.Table) (lost, notCompared []string) {
	compared := map[stats.Cell]bool{}
	for _, r := range t.Rows {
		compared[r.Cell] = true
	}
	type apart struct {
		status  [2]matrixgen.Status // "": not measured
		reasonB string
	}
	cells := map[stats.Cell]*apart{}
	var order []stats.Cell
	for side, r := range []*matrixgen.Run{a, b} {
		eachCell(r, func(c stats.Cell, s matrixgen.Status, reason string) {
			if compared[c] {
				return
			}
			if cells[c] == nil {
				cells[c] = &apart{}
				order = append(order, c)
			}
			cells[c].status[side] = s
			if side == 1 {
				cells[c].reasonB = reason
			}
		})
	}
	for _, c := range order {
		st, why := cells[c].status, cells[c].status[1].Label()
		if st[0] != matrixgen.StatusValid || st[1] == "" || st[1] == matrixgen.StatusValid {
			notCompared = append(notCompared, fmt.Sprintf("%s (A %s, B %s)", c, cmp.Or(st[0].Label(), "not measured"),
				cmp.Or(st[1].Label(), "not measured")))
			continue
		}
		if cells[c].reasonB != "" {
			why += ": " + cells[c].reasonB
		}
		lost = append(lost, fmt.Sprintf("%s (B %s)", c, why))
	}
	return lost, notCompared
}
