package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
)

// AMD GPUs answer through rocm-smi, whose --json output is an object per
// card ("card0", …) of strings under its table's names ("Average Graphics
// Package Power (W)": "222.0"), and "system" for the driver. The names
// change between ROCm releases, so a field is found by any of its known
// names, ignoring case; "N/A…" (a two-die card's second die) is not
// reported.

// rocmSMI is the command for AMD GPUs.
const rocmSMI = "rocm-smi"

// rocmInfoArgs and rocmSampleArgs are the two questions asked of it.
var (
	rocmInfoArgs   = []string{"--showproductname", "--showmeminfo", "vram", "--showmaxpower", "--showdriverversion", "--json"}
	rocmSampleArgs = []string{"--showpower", "--showclocks", "--showuse", "--showmeminfo", "vram", "--showtemp", "--json"}
)

// isROCm tells the dialect of a GPU tool by its name.
func isROCm(tool string) bool { return strings.HasPrefix(filepath.Base(tool), rocmSMI) }

// rocmCard is one card of rocm-smi's answer, its field names lower-cased.
type rocmCard struct {
	index  int
	fields map[string]string
}

// parseROCm reads one --json answer: its cards in index order, and the
// driver version where it says one.
func parseROCm(b []byte) (cards []rocmCard, driver string, err error) {
	var doc map[string]map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, "", fmt.Errorf("rocm-smi --json: %v", err)
	}
	for key, obj := range doc {
		fields := map[string]string{}
		for k, v := range obj {
			k = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(k)), ":")
			switch v := v.(type) {
			case string:
				fields[k] = strings.TrimSpace(v)
			case float64:
				fields[k] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		if key == "system" {
			driver = fields["driver version"]
			continue
		}
		n, ok := strings.CutPrefix(key, "card")
		idx, err := strconv.Atoi(n)
		if !ok || err != nil || idx < 0 || idx > 1024 {
			continue // not a card
		}
		cards = append(cards, rocmCard{index: idx, fields: fields})
	}
	slices.SortFunc(cards, func(a, b rocmCard) int { return a.index - b.index })
	return cards, driver, nil
}

// text is the first of names the card reports.
func (c rocmCard) text(names ...string) string {
	for _, n := range names {
		if v := c.fields[n]; v != "" && !strings.HasPrefix(strings.ToUpper(v), "N/A") {
			return v
		}
	}
	return ""
}

// rocmNumber reads the number in values like "222.0", "(800Mhz)", "45%".
var rocmNumber = regexp.MustCompile(`^\(?\s*([0-9]+(?:\.[0-9]+)?)\s*(?:mhz|w|%|c)?\s*\)?$`)

// number is the first of names the card reports as a number; nil for none.
func (c rocmCard) number(names ...string) *float64 {
	m := rocmNumber.FindStringSubmatch(strings.ToLower(c.text(names...)))
	if m == nil {
		return nil
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// mib turns a byte count into MiB.
func mib(bytes *float64) *float64 {
	if bytes == nil {
		return nil
	}
	return new(*bytes / (1 << 20))
}

// sample is the card's telemetry at one moment, each field by its names
// (newest first). rocm-smi reports no throttle reasons: AMD cells carry none.
func (c rocmCard) sample(at time.Time) gpuSample {
	return gpuSample{
		at:          at,
		index:       c.index,
		power:       c.number("current socket graphics package power (w)", "average graphics package power (w)"),
		smClock:     c.number("sclk clock speed"),
		memClock:    c.number("mclk clock speed"),
		util:        c.number("gpu use (%)"),
		memUsed:     mib(c.number("vram total used memory (b)")),
		temperature: c.number("temperature (sensor edge) (c)", "temperature (sensor junction) (c)"),
	}
}

// info is the card as the hardware panel needs it.
func (c rocmCard) info(driver string) gpuInfo {
	return gpuInfo{
		index:      c.index,
		name:       c.text("card series", "device name", "card model"),
		memoryMiB:  mib(c.number("vram total memory (b)")),
		driver:     driver,
		powerLimit: c.number("max graphics package power (w)"),
	}
}

// askROCm runs rocm-smi with args (within askTool's bounds) and reads its
// answer.
func askROCm(ctx context.Context, tool string, args []string) ([]rocmCard, string, error) {
	out, err := askTool(ctx, tool, args...)
	if err != nil {
		return nil, "", err
	}
	return parseROCm(out)
}

// detectROCm fills the panel's GPU fields from rocm-smi.
func detectROCm(ctx context.Context, h *matrixgen.Hardware, tool string) {
	cards, driver, err := askROCm(ctx, tool, rocmInfoArgs)
	if err != nil || len(cards) == 0 {
		return
	}
	gpus := make([]gpuInfo, len(cards))
	for i, c := range cards {
		gpus[i] = c.info(driver)
	}
	describeGPUs(h, gpus)
}

// rocmSamples is one round of the sampler, every card at the middle of the
// call: rocm-smi does not say when within it it read them.
func rocmSamples(ctx context.Context, tool string) ([]gpuSample, error) {
	start := time.Now()
	cards, _, err := askROCm(ctx, tool, rocmSampleArgs)
	if err != nil {
		return nil, err
	}
	now := start.Add(time.Since(start) / 2)
	out := make([]gpuSample, len(cards))
	for i, c := range cards {
		out[i] = c.sample(now)
	}
	return out, nil
}
