package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// decodeCell is a measured decode cell of total tok/s total and TTFT ttft ms.
func decodeCell(context, n int, status matrixgen.Status, total, ttft float64) matrixgen.Decode {
	return matrixgen.Decode{ContextTokens: context, Concurrency: n, Status: status,
		TotalTokS: new(total), PerRequestTokS: new(total / float64(n)), TTFTMs: &matrixgen.Percentiles{P50: ttft}}
}

// TestColourScaleFromTheBest: a scale from the lowest figure to the highest
// painted 445 and 489 tok/s as worst and best. On a scale from the best
// figure over at least 16×, a tenth apart is one step at most, near the
// top; a lower-is-better view (TTFT) likewise from its smallest figure;
// and a run spanning more than 16× keeps its lowest figure at the bottom.
func TestColourScaleFromTheBest(t *testing.T) {
	r := &matrixgen.Run{Decode: []matrixgen.Decode{
		decodeCell(8192, 1, matrixgen.StatusValid, 445, 250),
		decodeCell(8192, 2, matrixgen.StatusValid, 489, 280),
	}}
	m, lg := decodeMatrix(r)
	got := []string{m.Rows[0].Cells[0].Class, m.Rows[0].Cells[1].Class}
	if got[0] != binClass(binCount-1) && got[0] != binClass(binCount-2) || got[1] != binClass(binCount-1) {
		t.Errorf("445 and 489 tok/s coloured %v; want the top step or the one beneath for both", got)
	}
	if len(lg.Bins) != binCount || !strings.HasPrefix(lg.Bins[0].Range, tokS(489.0/minScaleSpan)+"–") {
		t.Errorf("legend %v: want %d steps from %s up", lg.Bins, binCount, tokS(489.0/minScaleSpan))
	}
	for _, v := range matrixViews(cellOrder(r)) {
		for _, c := range v.Cells {
			if c.Value[1] != binClass(binCount-1) && c.Value[1] != binClass(binCount-2) {
				t.Errorf("view %s: cell %s coloured %s; figures a tenth apart belong at the top", v.Name, c.ID, c.Value[1])
			}
		}
		if !strings.Contains(v.Label, "from the best figure, over at least 16×") {
			t.Errorf("view %s: the legend's title %q does not say how the colours are scaled", v.Name, v.Label)
		}
	}
	wide := &matrixgen.Run{Decode: append(r.Decode, decodeCell(8192, 4, matrixgen.StatusValid, 20, 300))}
	if m, _ := decodeMatrix(wide); m.Rows[0].Cells[2].Class != binClass(0) {
		t.Errorf("20 tok/s beside 489: %s, want the lowest step", m.Rows[0].Cells[2].Class)
	}
}

// TestLoopedCellShowsItsFigure: the table printed a looped cell's 700.0
// tok/s and the matrix nothing. The matrix prints it beside the looped
// mark, uncoloured (it is not a speed to rank), in every view that has it.
func TestLoopedCellShowsItsFigure(t *testing.T) {
	r := &matrixgen.Run{Decode: []matrixgen.Decode{
		decodeCell(8192, 1, matrixgen.StatusValid, 445, 250),
		decodeCell(8192, 2, matrixgen.StatusLooped, 700, 260),
	}}
	m, _ := decodeMatrix(r)
	looped := m.Rows[0].Cells[1]
	if looped.Figure != "700.0" || !strings.Contains(looped.Status, "Looped") || strings.Contains(looped.Class, "bin-") {
		t.Errorf("looped cell: figure %q, status %q, class %q; want 700.0 beside the looped mark, uncoloured", looped.Figure, looped.Status, looped.Class)
	}
	bld, err := NewRenderer(Site{})
	if err != nil {
		t.Fatal(err)
	}
	html, err := bld.matrixHTML(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<span class="fig">700.0</span>`) {
		t.Errorf("the matrix does not print the looped figure:\n%s", html)
	}
	for _, v := range matrixViews(cellOrder(r)) {
		for _, c := range v.Cells {
			if c.ID == cellID(r.Decode[1]) && (c.Value[0] == dash || c.Value[1] != "") {
				t.Errorf("view %s: looped cell %v; want its figure, uncoloured", v.Name, c.Value)
			}
		}
	}
}

// TestNoteHeadingsBelowNotes: a note's "#" stood larger than the page's
// "Notes" (an h2). A note's highest heading is an h3, the rest follow.
func TestNoteHeadingsBelowNotes(t *testing.T) {
	for _, tt := range []struct{ note, want string }{
		{"# Setup\n\n## Detail\n\n###### Deepest\n", "<h3>Setup</h3>\n<h4>Detail</h4>\n<h6>Deepest</h6>\n"},
		{"## Launch\n\n### Flags\n", "<h3>Launch</h3>\n<h4>Flags</h4>\n"},
	} {
		var b bytes.Buffer
		if err := newMarkdown().Convert([]byte(tt.note), &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%q rendered\n%s\nwant\n%s", tt.note, b.String(), tt.want)
		}
	}
}

// TestPlainNotesAreText: notes too costly for Markdown are shown as the
// text they are, escaped by the run page's template like every other
// value, so markup in them cannot end the <pre> or run.
func TestPlainNotesAreText(t *testing.T) {
	const evil = "</pre><script>alert(1)</script>"
	bld, err := NewRenderer(Site{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := bld.newRunPage(runfile.Entry{ID: "a", Run: testrun.Full(1), Notes: []byte(strings.Repeat("*a_", 3000) + evil)})
	if err != nil {
		t.Fatal(err)
	}
	html, err := execute(bld.run, page)
	if err != nil {
		t.Fatal(err)
	}
	_, notes, _ := strings.Cut(string(html), `<section class="notes">`)
	notes, _, _ = strings.Cut(notes, "</section>")
	if !strings.Contains(notes, "These notes are shown as plain text: ") || !strings.Contains(notes, "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;</pre>") || strings.Contains(notes, "<script") {
		t.Errorf("plain notes not shown as escaped text:\n%.300s", notes[max(0, len(notes)-300):])
	}
}

// TestTimesStayOnOneLine: "2026-01-01 00:00 UTC" wrapped in a panel's
// narrow column; its spaces are no-break spaces.
func TestTimesStayOnOneLine(t *testing.T) {
	got := dateTime(time.Date(2026, 1, 1, 9, 5, 0, 0, time.UTC))
	if got != "2026-01-01\u00a009:05\u00a0UTC" || strings.ContainsAny(got, " \t") {
		t.Errorf("dateTime = %q: want no-break spaces only", got)
	}
}

// TestPrefillLineBeneathTheBars: the TTFT line crossed the bars' labels
// where it climbed past a bar's top. It is drawn in a panel of its own
// beneath the bars' (grid 1, its own axes), on the same contexts.
func TestPrefillLineBeneathTheBars(t *testing.T) {
	r := loadSample(t).Run.Sorted()
	option, _ := prefillChart(r)
	var o struct {
		Grid  []map[string]any `json:"grid"`
		XAxis []struct {
			GridIndex int      `json:"gridIndex"`
			Data      []string `json:"data"`
		} `json:"xAxis"`
		YAxis []struct {
			GridIndex int `json:"gridIndex"`
		} `json:"yAxis"`
		Series []struct {
			Type       string `json:"type"`
			XAxisIndex int    `json:"xAxisIndex"`
			YAxisIndex int    `json:"yAxisIndex"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(marshal(t, option)), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Grid) != 2 || len(o.XAxis) != 2 || len(o.YAxis) != 2 || len(o.Series) != 2 {
		t.Fatalf("%d grids, %d x axes, %d y axes, %d series; want two panels", len(o.Grid), len(o.XAxis), len(o.YAxis), len(o.Series))
	}
	bars, line := o.Series[0], o.Series[1]
	if bars.Type != "bar" || bars.XAxisIndex != 0 || bars.YAxisIndex != 0 || line.Type != "line" || line.XAxisIndex != 1 || line.YAxisIndex != 1 {
		t.Errorf("series %+v: want the bars on axes 0, the line on axes 1", o.Series)
	}
	if o.XAxis[1].GridIndex != 1 || o.YAxis[1].GridIndex != 1 || strings.Join(o.XAxis[0].Data, ",") != strings.Join(o.XAxis[1].Data, ",") || len(o.XAxis[1].Data) != len(r.Prefill) {
		t.Errorf("axes %+v %+v: want axes 1 in grid 1, both panels on the run's contexts", o.XAxis, o.YAxis)
	}
	// The line's panel begins below where the bars' ends.
	barsBottom, lineTop := percent(t, o.Grid[0]["bottom"]), percent(t, o.Grid[1]["top"])
	if 100-barsBottom >= lineTop {
		t.Errorf("the bars' panel ends at %g%%, the line's begins at %g%%: they overlap", 100-barsBottom, lineTop)
	}
}

func percent(t *testing.T, v any) float64 {
	s, _ := v.(string)
	var f float64
	if _, err := fmt.Sscanf(s, "%g%%", &f); err != nil {
		t.Fatalf("%v is not a percentage", v)
	}
	return f
}

// TestRepeatedRunSaysWhoseLatencies: with repeats, a cell's latencies are
// its median repeat's, not medians over the repeats; the page says so,
// and says nothing of repeats for a run measured once.
func TestRepeatedRunSaysWhoseLatencies(t *testing.T) {
	const said = "a repeated cell's figures, latencies too, are those of its median repeat"
	for _, repeats := range []int{0, 3} {
		r := testrun.Full(1)
		r.Sweep.Repeats = repeats
		out := filepath.Join(t.TempDir(), "public")
		if _, err := writeSite(Entries{{ID: "run", Run: r}}, Site{}, out); err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(out, "runs", "run", "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(page), said); got != (repeats > 1) {
			t.Errorf("%d repeats: the page says whose latencies: %v", repeats, got)
		}
	}
}
