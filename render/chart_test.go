package render

import (
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestPrefillChartIsGoEchartsOption holds the prefill chart, filled into
// the option cut once, to the option go-echarts builds for the run itself.
func TestPrefillChartIsGoEchartsOption(t *testing.T) {
	gaps := testrun.Full(5)
	gaps.Prefill[0].PromptTokS, gaps.Prefill[1].TTFTMs = nil, nil
	for i, r := range []*matrixgen.Run{loadSample(t).Run, testrun.Full(1), gaps} {
		r = r.Sorted()
		got, _ := prefillChart(r)
		contexts, rates, ttfts, _ := prefillData(r)
		if want := withMedia(prefillOption(contexts, rates, ttfts), prefillMedia()); got != want {
			t.Errorf("run %d: the prefill chart differs from go-echarts' option:\n got %s\nwant %s", i, got, want)
		}
	}
}
