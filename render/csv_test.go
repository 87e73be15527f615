package render

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// FuzzCSV: whatever text a run carries (a server's reason, a model or GPU
// name), measurements.csv and the run's rows of runs.csv read back with
// encoding/csv as one record a measurement, every field as written, and
// no text field starts as a spreadsheet formula unless it is defused with
// a leading quote.
func FuzzCSV(f *testing.F) {
	for _, s := range []string{"", "plain", `a "quoted" word`, "a,b", "line\nbreak", "cr\r", " leading", "\u00a0nbsp", `\.`, "=SUM(A1)", "+1", "-1", "@x", "\tx", "\rx", `=HYPERLINK("http://x","y")`,
		" =1", "\u00a0=1", "\ufeff=1", "\u200b+1", "\n-1", "\uff1d1", " \uff20x"} {
		f.Add(s, "model")
	}
	f.Fuzz(func(t *testing.T, reason, name string) {
		r := &matrixgen.Run{
			Model:    matrixgen.Model{Name: name},
			Hardware: matrixgen.Hardware{GPU: name},
			Engine:   matrixgen.Engine{Name: name, Version: reason, Quantization: name},
			Prefill:  []matrixgen.Prefill{{ContextTokens: 8192, Status: matrixgen.StatusError, Reason: reason}},
			Decode: []matrixgen.Decode{
				{ContextTokens: 8192, Concurrency: 1, Status: matrixgen.StatusError, Reason: reason},
				{ContextTokens: 8192, Concurrency: 2, Status: matrixgen.StatusLooped, Reason: name},
			},
		}
		rows := csvRows(r)
		for _, c := range []struct {
			name   string
			header []string
			rows   [][]string
			text   []int // the columns of free text
		}{
			{"measurements.csv", csvHeader, rows, []int{5}},
			{"runs.csv", siteCSVHeader, siteCSVRows("run", r, rows), []int{1, 2, 3, 4, 5, 12}},
		} {
			data := csvBytes(c.header, c.rows)
			back, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil {
				t.Fatalf("%s does not read back: %v\n%q", c.name, err, data)
			}
			// encoding/csv reads a quoted "\r\n" as "\n", as spreadsheets do.
			want := append([][]string{c.header}, c.rows...)
			readsAs := func(written, read []string) bool {
				return slices.EqualFunc(written, read, func(w, r string) bool { return strings.ReplaceAll(w, "\r\n", "\n") == r })
			}
			if !slices.EqualFunc(want, back, readsAs) {
				t.Fatalf("%s read back as\n%q\nwant\n%q", c.name, back, want)
			}
			for _, row := range back[1:] {
				for _, col := range c.text {
					if field := row[col]; startsAsFormula(field) {
						t.Fatalf("%s: column %s is a formula: %q", c.name, c.header[col], field)
					}
				}
			}
		}
		if got := csvSafe(reason); startsAsFormula(reason) != (got == "'"+reason) || got != reason && got != "'"+reason {
			t.Fatalf("csvSafe(%q) = %q", reason, got)
		}
	})
}

// startsAsFormula reports whether a spreadsheet could read field as a
// formula: past the white space and invisible format characters it may
// skip, it starts with = + - @ or their fullwidth forms; or it starts with
// a tab or a carriage return. A field defused with a leading quote does
// not.
func startsAsFormula(field string) bool {
	if field == "" {
		return false
	}
	if field[0] == '\t' || field[0] == '\r' {
		return true
	}
	for _, r := range field {
		if unicode.IsSpace(r) || unicode.In(r, unicode.Cf) {
			continue
		}
		return strings.ContainsRune("=+-@＝＋－＠", r)
	}
	return false
}

// TestCSVSafeEveryLead: every lead a spreadsheet skips, alone or several,
// before every formula character, ASCII or fullwidth, is defused; the
// same text without a formula character is left as it is.
func TestCSVSafeEveryLead(t *testing.T) {
	leads := []string{"", " ", "  ", "\u00a0", "\ufeff", "\t", "\r", "\n", "\u3000", "\u2007", "\u200b", "\u2060", " \u00a0\ufeff\t"}
	formulas := []string{"=", "+", "-", "@", "＝", "＋", "－", "＠"}
	tails := []string{"", "1+1", `HYPERLINK("http://x","y")`, "cmd|' /C calc'!A0"}
	for _, lead := range leads {
		for _, f := range formulas {
			for _, tail := range tails {
				s := lead + f + tail
				if got := csvSafe(s); got != "'"+s {
					t.Errorf("csvSafe(%q) = %q, want it defused", s, got)
				}
			}
		}
		for _, plain := range []string{"model", "a=b", "１", "0.30.1+cu128", "NVFP4+FP8"} {
			s := lead + plain
			want := s
			if lead != "" && (lead[0] == '\t' || lead[0] == '\r') {
				want = "'" + s // a tab or a CR first is defused whatever follows
			}
			if got := csvSafe(s); got != want {
				t.Errorf("csvSafe(%q) = %q, want %q", s, got, want)
			}
		}
	}
}

// BenchmarkCSV1000 writes the CSV of 1,000 full runs as a build does, each
// run's measurements.csv and its rows of runs.csv, from rows made before:
// what encoding/csv does for a build.
func BenchmarkCSV1000(b *testing.B) {
	measurements := make([][][]string, 1000)
	site := make([][][]string, 1000)
	for i := range measurements {
		r := testrun.Full(uint64(i))
		measurements[i] = csvRows(r)
		site[i] = siteCSVRows(strconv.Itoa(i), r, measurements[i])
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range measurements {
			_ = csvBytes(csvHeader, measurements[i])
			_ = csvBytes(nil, site[i])
		}
	}
}

// siteCSVRows are one run's rows of runs.csv: its measurement rows with
// the run's identity in front.
func siteCSVRows(id string, r *matrixgen.Run, measurements [][]string) [][]string {
	prefix := siteCSVPrefixFields(id, r)
	rows := make([][]string, len(measurements))
	for i, row := range measurements {
		rows[i] = append(slices.Clone(prefix), row...)
	}
	return rows
}
