package render

import (
	"encoding/json"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestPrefillChartIsGoEchartsOption holds the prefill chart, a run's data
// filled into the option built once, to the option go-echarts builds for
// the run itself, and checks the filling left the shared option empty.
func TestPrefillChartIsGoEchartsOption(t *testing.T) {
	empty := marshal(t, emptyPrefillOption())
	gaps := testrun.Full(5)
	gaps.Prefill[0].PromptTokS, gaps.Prefill[1].TTFTMs = nil, nil
	for i, r := range []*matrixgen.Run{loadSample(t).Run, testrun.Full(1), gaps} {
		r = r.Sorted()
		got, _ := prefillChart(r)
		contexts, rates, ttfts, _ := prefillData(r)
		if got, want := marshal(t, got), marshal(t, prefillOption(contexts, rates, ttfts)); got != want {
			t.Errorf("run %d: the prefill chart differs from go-echarts' option:\n got %s\nwant %s", i, got, want)
		}
	}
	if got := marshal(t, emptyPrefillOption()); got != empty {
		t.Errorf("filling the prefill chart changed the shared option:\n got %s\nwant %s", got, empty)
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChartsCarryPhoneLayouts: the prefill and index charts change their
// labels on a phone by ECharts' media queries, which go-echarts has no
// option for: its visitor adds them, a wide layout and a phone's.
func TestChartsCarryPhoneLayouts(t *testing.T) {
	prefill, _ := prefillChart(testrun.Full(1).Sorted())
	index, _ := indexChart([]indexRow{{ID: "a",
		CachedRow: CachedRow{BestValue: "445.7", BestSingle: "445.7", PeakValue: "6904", Peak: "6,904.0"}}})
	for name, option := range map[string]map[string]any{"prefill": prefill, "index": index} {
		var o struct {
			Media []struct {
				Query  map[string]int  `json:"query"`
				Option json.RawMessage `json:"option"`
			} `json:"media"`
		}
		if err := json.Unmarshal([]byte(marshal(t, option)), &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Media) != 2 || o.Media[0].Query["minWidth"] != phoneWidth+1 || o.Media[1].Query["maxWidth"] != phoneWidth ||
			len(o.Media[0].Option) < 3 || len(o.Media[1].Option) < 3 {
			t.Errorf("%s chart's media queries: %+v; want a wide layout and a phone's", name, o.Media)
		}
	}
}
