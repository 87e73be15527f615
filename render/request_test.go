package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// withThinkingOff is the sample run as if its requests had carried
// thinking off, a temperature and a field that tries to end the page's
// markup.
func withThinkingOff(t *testing.T) *matrixgen.Run {
	r := *loadSample(t).Run
	r.Request = &matrixgen.Request{Temperature: new(0.6),
		ChatTemplateKwargs: map[string]any{"enable_thinking": false},
		Extra:              map[string]any{"stop": "</td><script>alert(1)</script>"}}
	return &r
}

// TestPageShowsTheRequest: two runs that differed only in thinking looked
// the same on their pages. The run panel says what every request
// carried, escaped as every value is.
func TestPageShowsTheRequest(t *testing.T) {
	e := loadSample(t)
	e.Run = withThinkingOff(t)
	out := t.TempDir()
	if _, err := writeSite(Entries{e}, Site{}, out); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(out, "runs", sampleID, "index.html"))
	for _, want := range []string{"<dt>Temperature</dt><dd>0.6</dd>", "<dt>Chat template arguments</dt><dd>{&#34;enable_thinking&#34;: false}</dd>",
		"<dt>Extra request fields</dt><dd>{&#34;stop&#34;: &#34;&lt;/td&gt;&lt;script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Error("a request's value wrote markup into the page")
	}
	if c := readCompareRun(t, out, sampleID); c.Settings[len(c.Settings)-1].Text != requestLabel(e.Run.Request) {
		t.Errorf("compare.js's request is %+v", c.Settings[len(c.Settings)-1])
	}
}

// TestCompareSetsTheRequestsApart: the compare page's settings rows
// differ where only the request did, and a long request is cut as other
// shown text.
func TestCompareSetsTheRequestsApart(t *testing.T) {
	a, b := loadSample(t).Run, withThinkingOff(t)
	sa, sb := compareSettings(a), compareSettings(b)
	if len(sa) != len(sb) {
		t.Fatalf("%d settings and %d", len(sa), len(sb))
	}
	differ := 0
	for i := range sa {
		if sa[i] != sb[i] {
			differ++
			if sa[i].Label != "Request" || sa[i].Text != "" || !strings.HasPrefix(sb[i].Text, "temperature 0.6") {
				t.Errorf("%+v against %+v", sa[i], sb[i])
			}
		}
	}
	if differ != 1 {
		t.Errorf("%d settings differ, want the request", differ)
	}
	b.Request.Extra["huge"] = strings.Repeat("x", 10*maxShownText)
	if n := len(requestLabel(b.Request)); n > maxShownText+64 {
		t.Errorf("a request of %d bytes is shown in %d", 10*maxShownText, n)
	}
}
