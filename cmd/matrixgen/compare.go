package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/term"
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
and whether it is significant, tested by Mann–Whitney U on the samples
inside the cell (its tokens in each second of its window, or its prefill
requests' rates). A change not shown to be real prints "~". Significance
is corrected for the number of cells (Holm), so the chance that any cell
of the table is called significant when nothing changed is at most 5 %.
The last line is the geometric mean of the changes.

With -fail-on, exits 1 when any significant change is a slowdown beyond
it: a regression gate for CI.
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
		failOn := fs.String("fail-on", "", "exit 1 on a significant slowdown beyond this `share` (5% or 0.05); empty: never")
		return func(args []string, stdout, stderr io.Writer) error {
			if len(args) != 2 {
				return usagef("name two runs to compare, A and B")
			}
			if *format != "text" && *format != "markdown" && *format != "json" {
				return usagef("-format: want text, markdown or json, not %q", *format)
			}
			beyond, gate, err := parseShare(*failOn)
			if err != nil {
				return usagef("-fail-on: %v", err)
			}
			if args[0] == args[1] {
				return usagef("A and B are one run (%s): name two runs", term.Name(args[0]))
			}
			a, err := loadCompared(*runs, args[0])
			if err != nil {
				return err
			}
			b, err := loadCompared(*runs, args[1])
			if err != nil {
				return err
			}
			table := stats.CompareRuns(a.Run, b.Run)
			switch *format {
			case "json":
				err = writeCompareJSON(stdout, a.ID, b.ID, table)
			case "markdown":
				err = writeCompareMarkdown(stdout, a.ID, b.ID, table)
			default:
				err = writeCompareText(stdout, a.ID, b.ID, table)
			}
			if err != nil {
				return err
			}
			if left := leftOut(a.Run, b.Run, table); len(left) > 0 && *format != "json" {
				fmt.Fprintf(stdout, "not compared (a figure is compared where both runs are Valid): %s\n", strings.Join(left, "; "))
			}
			if !gate {
				return nil
			}
			if slow := table.Slowdowns(beyond); len(slow) > 0 {
				names := make([]string, len(slow))
				for i, r := range slow {
					names[i] = fmt.Sprintf("%s %s", r.Cell, percent(r.Change()))
				}
				return fmt.Errorf("%s significantly slower by more than %s: %s",
					plural.Count(len(slow), "cell", "cells"), percent(beyond), strings.Join(names, ", "))
			}
			return nil
		}
	},
}

// parseShare reads -fail-on: "5%" or "0.05" is five per cent; "" no gate.
func parseShare(s string) (share float64, set bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	text, scale := s, 1.0
	if t, ok := strings.CutSuffix(s, "%"); ok {
		text, scale = t, 0.01
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || !(v*scale >= 0) || v*scale >= 1 {
		return 0, false, fmt.Errorf("want a share from 0 to 1 (0.05) or a percentage (5%%), not %q", s)
	}
	return v * scale, true, nil
}

// loadCompared reads a run named by its file, its id in the runs folder,
// or its place in a bucket: a URL to the file (s3://lab/runs/<id>.json),
// or its id with -runs a bucket URL.
func loadCompared(runs, name string) (matrixgen.Entry, error) {
	switch {
	case bucket.IsURL(name):
		u, err := url.Parse(name)
		if err != nil || !strings.HasSuffix(u.Path, ".json") {
			return matrixgen.Entry{}, usagef("%s: name the run file in the bucket (…/<id>.json)", bucket.Redact(name))
		}
		key := path.Base(u.Path)
		u.Path = path.Dir(u.Path) + "/"
		return fetchRun(u.String(), key)
	case bucket.IsURL(runs) && !strings.HasSuffix(name, ".json"):
		return fetchRun(runs, name+".json")
	}
	file := name
	if !strings.HasSuffix(name, ".json") {
		if _, err := os.Stat(name); err != nil {
			file = filepath.Join(runs, name+".json")
		}
	}
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) && file != name {
		return matrixgen.Entry{}, fmt.Errorf("no run %s: neither a file of that name nor %s in the runs folder %s (-runs)",
			term.Name(name), term.Name(name+".json"), term.Name(runs))
	}
	e, err := matrixgen.LoadFile(file)
	if err != nil {
		return e, err
	}
	if e.ID == "" {
		e.ID = strings.TrimSuffix(filepath.Base(file), ".json")
	}
	return e, nil
}

// fetchRun reads the run file key from the bucket at place.
func fetchRun(place, key string) (matrixgen.Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := bucket.Open(ctx, place)
	if err != nil {
		return matrixgen.Entry{}, err
	}
	defer store.Close()
	data, found, err := store.Get(ctx, key)
	if err != nil || !found {
		return matrixgen.Entry{}, cmp.Or(err, fmt.Errorf("%s has no %s", store, term.Name(key)))
	}
	shown := strings.TrimSuffix(store.String(), "/") + "/" + key
	run, err := matrixgen.DecodeRun(shown, data)
	if err != nil {
		return matrixgen.Entry{}, err
	}
	return matrixgen.Entry{ID: strings.TrimSuffix(key, ".json"), Run: run, Raw: data}, nil
}

// percent is a share as a signed percentage: "-10.0 %".
func percent(share float64) string { return fmt.Sprintf("%+.1f %%", 100*share) }

// verdict is what a row's last column says: "~" where no change was shown.
func verdict(r stats.Row) string {
	switch {
	case !r.Significant:
		return "~"
	case r.Ratio < 1:
		return "slower"
	default:
		return "faster"
	}
}

// pText is the row's p as a table shows it, with its samples: "p=0.003
// n=30+30", "n/a" where a side had none.
func pText(r stats.Row) string {
	if !r.Tested() {
		return "n/a"
	}
	p := strconv.FormatFloat(r.PAdjusted, 'g', 2, 64)
	if r.PAdjusted < 0.001 {
		p = "<0.001"
	} else {
		p = "=" + p
	}
	return fmt.Sprintf("p%s n=%d+%d", p, r.SamplesA, r.SamplesB)
}

func compareRows(t stats.Table) [][]string {
	rows := make([][]string, 0, len(t.Rows)+1)
	for _, r := range t.Rows {
		rows = append(rows, []string{r.Cell.String(), rate(r.A), rate(r.B), percent(r.Change()), pText(r), verdict(r)})
	}
	if t.GeoMean > 0 {
		rows = append(rows, []string{"geomean", "", "", percent(t.GeoMean - 1), "", ""})
	}
	return rows
}

func rate(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// compareHeader is the table's header; which runs A and B are goes above
// it (runsLine), as ids can be long.
func compareHeader() []string {
	return []string{"cell", "A tok/s", "B tok/s", "change", "p (Holm)", ""}
}

func runsLine(a, b string) string { return "A: " + term.Name(a) + "\nB: " + term.Name(b) + "\n" }

// legend says which test and level the table used.
func legend(t stats.Table) string {
	return fmt.Sprintf("Mann–Whitney U over each cell's samples, two-sided; significant at 5 %% after Holm's correction over %s; ~ where not.",
		plural.Count(t.Tests, "tested cell", "tested cells"))
}

func writeCompareText(w io.Writer, a, b string, t stats.Table) error {
	io.WriteString(w, runsLine(a, b)+"\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range append([][]string{compareHeader()}, compareRows(t)...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, legend(t))
	return err
}

func writeCompareMarkdown(w io.Writer, a, b string, t stats.Table) error {
	var sb strings.Builder
	line := func(cells []string) {
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "|", `\|`)
		}
		sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	sb.WriteString(strings.ReplaceAll(runsLine("`"+a+"`", "`"+b+"`"), "\n", "  \n") + "\n")
	line(compareHeader())
	sb.WriteString("|---|--:|--:|--:|---|---|\n")
	for _, r := range compareRows(t) {
		line(r)
	}
	sb.WriteString("\n" + legend(t) + "\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

func writeCompareJSON(w io.Writer, a, b string, t stats.Table) error {
	out := struct {
		A     string      `json:"a"`
		B     string      `json:"b"`
		Alpha float64     `json:"alpha"`
		Test  string      `json:"test"`
		Table stats.Table `json:"table"`
	}{a, b, stats.Alpha, "mann-whitney-u two-sided, holm", t}
	err := json.MarshalWrite(w, out, jsontext.WithIndent("  "))
	if err == nil {
		_, err = io.WriteString(w, "\n")
	}
	return err
}

// leftOut names the measurements of either run that the table has no row
// for, with each run's status there, so that a cell left out is never
// silently missing: "decode 8K×4 (A Valid, B Requests queued)".
func leftOut(a, b *matrixgen.Run, t stats.Table) []string {
	compared := map[stats.Cell]bool{}
	for _, r := range t.Rows {
		compared[r.Cell] = true
	}
	statuses := map[stats.Cell][2]string{}
	var order []stats.Cell
	note := func(c stats.Cell, side int, s matrixgen.Status) {
		if compared[c] {
			return
		}
		st, seen := statuses[c]
		if !seen {
			st = [2]string{"not measured", "not measured"}
			order = append(order, c)
		}
		st[side] = s.Label()
		statuses[c] = st
	}
	for side, r := range []*matrixgen.Run{a, b} {
		for _, p := range r.Prefill {
			note(stats.Cell{Phase: stats.PhasePrefill, Context: p.ContextTokens}, side, p.Status)
		}
		for _, d := range r.Decode {
			note(stats.Cell{Phase: stats.PhaseDecode, Context: d.ContextTokens, Concurrency: d.Concurrency}, side, d.Status)
		}
	}
	out := make([]string, len(order))
	for i, c := range order {
		out[i] = fmt.Sprintf("%s (A %s, B %s)", c, statuses[c][0], statuses[c][1])
	}
	return out
}
