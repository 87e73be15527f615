package render

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markedPair builds a site of the sample run beside two copies of it: one
// measured against the sim, one with its GPU and VRAM given by hand, and
// compare pages of each against the sample.
func markedPair(t *testing.T) string {
	t.Helper()
	sample := loadSample(t)
	sim, given := loadSample(t), loadSample(t)
	sim.ID, sim.Raw, sim.Notes = "simulated-run", nil, nil
	sim.Run.Simulated = true
	given.ID, given.Raw, given.Notes = "given-run", nil, nil
	given.Run.Hardware.Given = []string{"gpu", "vram_gb"}
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries{sample, sim, given}, Site{Compare: []Pair{{sampleID, "simulated-run"}, {sampleID, "given-run"}}}, out); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	heading     = regexp.MustCompile(`<h1>([^<]*)</h1>`)
	hardwareRow = regexp.MustCompile(`<dt>(GPU|VRAM|CPU)</dt><dd>([^<]*)</dd>`)
)

// TestSimulatedRunIsMarkedEverywhere: a sim run claims no hardware in its
// title and is marked simulated wherever it is shown: its page, the
// index's row (a card on a phone) and compare picker, and runs.csv (its
// compare data: TestCompareScriptMarksHardware).
func TestSimulatedRunIsMarkedEverywhere(t *testing.T) {
	out := markedPair(t)
	page := read(t, filepath.Join(out, "runs", "simulated-run", "index.html"))
	if h := heading.FindStringSubmatch(page); h == nil || !strings.HasSuffix(h[1], " on matrixgen sim") || strings.Contains(h[1], "RTX") {
		t.Errorf("run page heading %q", h)
	}
	if !strings.Contains(page, "Simulated: measured against") || strings.Contains(page[:strings.Index(page, "</title>")], "RTX") {
		t.Error("the run page's title block does not say it was simulated, or its title names hardware")
	}
	index := read(t, filepath.Join(out, "index.html"))
	row := index[strings.Index(index, `data-id="simulated-run"`):]
	row = row[:strings.Index(row, "</tr>")]
	for _, want := range []string{`data-gpu="matrixgen sim"`, `<span class="badge">simulated</span>`, `<td data-label="GPU">matrixgen sim</td>`} {
		if !strings.Contains(row, want) {
			t.Errorf("the index row lacks %s:\n%s", want, row)
		}
	}
	if !strings.Contains(index, `<option value="simulated-run">simulated-run (simulated)</option>`) {
		t.Error("the index's compare picker does not mark the run simulated")
	}
	csv := read(t, filepath.Join(out, "runs.csv"))
	for _, line := range strings.Split(strings.TrimSpace(csv), "\n")[1:] {
		fields := strings.Split(line, ",")
		if want := strings.HasPrefix(line, "simulated-run,"); (fields[7] == "true") != want {
			t.Errorf("runs.csv simulated column %q for %s", fields[7], fields[0])
		}
	}
	if header := csv[:strings.Index(csv, "\n")]; !strings.Contains(header, ",started_at,simulated,hardware_given,") {
		t.Errorf("runs.csv header %q", header)
	}
}

// TestGivenHardwareIsMarked: hardware a person typed is shown as given on
// the run page (title and panel) and the index (its compare data:
// TestCompareScriptMarksHardware), and named in runs.csv; what was detected is not marked.
func TestGivenHardwareIsMarked(t *testing.T) {
	out := markedPair(t)
	page := read(t, filepath.Join(out, "runs", "given-run", "index.html"))
	if h := heading.FindStringSubmatch(page); h == nil || !strings.HasSuffix(h[1], "96GB (as given)") {
		t.Errorf("run page heading %q", h)
	}
	rows := map[string]string{}
	for _, m := range hardwareRow.FindAllStringSubmatch(page, -1) {
		rows[m[1]] = m[2]
	}
	if rows["GPU"] != "RTX PRO 6000 Blackwell Server Edition (as given)" || rows["VRAM"] != "96 GB (as given)" {
		t.Errorf("hardware panel: %v", rows)
	}
	index := read(t, filepath.Join(out, "index.html"))
	if !strings.Contains(index, `<td data-label="GPU">RTX PRO 6000 Blackwell Server Edition (as given)</td>`) {
		t.Error("the index does not mark the GPU as given")
	}
	if csv := read(t, filepath.Join(out, "runs.csv")); !strings.Contains(csv, ",false,gpu vram_gb,") {
		t.Error("runs.csv does not name the hardware given")
	}
	sample := read(t, filepath.Join(out, "runs", sampleID, "index.html"))
	if strings.Contains(sample, "as given") || strings.Contains(sample, "simulated") {
		t.Error("the sample run, which claims nothing by hand, is marked")
	}
}
