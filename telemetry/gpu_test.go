package telemetry

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
)

// A GPU as nvidia-smi answers the runner's queries, in its real format.
const (
	gpuInfoLine    = "%d, NVIDIA RTX PRO 6000 Blackwell Server Edition, 97887, 580.95.05, 600.00, 600.00, 5, 16"
	telemetryLine  = "%d, 300.00, 2400, 12000, 95, 80213, 61, 0x0000000000000000"
	throttledLine  = "%d, 600.00, 1800, 12000, 100, 80213, 84, 0x0000000000000024"
	notSupportLine = "%d, [N/A], 2400, [Not Supported], 95, 80213, [N/A], [Not Supported]"
)

func TestParseGPUInfo(t *testing.T) {
	text := fmt.Sprintf(gpuInfoLine+"\n"+gpuInfoLine+"\n", 0, 1)
	gpus, err := parseGPUInfo(text)
	if err != nil || len(gpus) != 2 {
		t.Fatalf("%d GPUs, %v", len(gpus), err)
	}
	var h matrixgen.Hardware
	describeGPUs(&h, gpus)
	if h.GPU != "RTX PRO 6000 Blackwell Server Edition" || h.GPUCount != 2 || h.VRAMGB != 96 || h.Driver != "580.95.05" ||
		h.PowerLimitW != 600 || h.DefaultPowerLimitW != 600 || h.PCIe != "Gen 5 x16" || h.Type != "Discrete GPU" {
		t.Errorf("hardware %+v", h)
	}
	na, err := parseGPUInfo("0, NVIDIA GeForce RTX 4090, 24564, 580.95.05, [N/A], [Not Supported], [N/A], [N/A]")
	if err != nil || na[0].powerLimit != nil || na[0].pcieGen != nil || *na[0].memoryMiB != 24564 {
		t.Errorf("[N/A] fields: %+v, %v", na, err)
	}
	for _, bad := range []string{"0, a, b", "x, NVIDIA, 1, d, 1, 1, 1, 1", "0, NVIDIA, lots, d, 1, 1, 1, 1"} {
		if _, err := parseGPUInfo(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseTelemetryLine(t *testing.T) {
	at := time.Unix(1000, 0)
	s, err := parseTelemetryLine(fmt.Sprintf(throttledLine, 3), at)
	if err != nil || s.index != 3 || *s.power != 600 || *s.smClock != 1800 || *s.temperature != 84 || s.throttle != 0x24 {
		t.Errorf("%+v, %v", s, err)
	}
	s, err = parseTelemetryLine(fmt.Sprintf(notSupportLine, 0), at)
	if err != nil || s.power != nil || s.memClock != nil || s.temperature != nil || s.throttle != 0 || *s.smClock != 2400 {
		t.Errorf("[N/A] line: %+v, %v", s, err)
	}
	for _, bad := range []string{"", "0, 1, 2", "0, -5, 1, 1, 1, 1, 1, 0x0", "0, NaN, 1, 1, 1, 1, 1, 0x0", "0, 1, 1, 1, 1, 1, 1, 0xzz"} {
		if _, err := parseTelemetryLine(bad, at); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseTelemetryLine(f *testing.F) {
	f.Add(fmt.Sprintf(telemetryLine, 0))
	f.Add(fmt.Sprintf(notSupportLine, 1))
	f.Add("0, 1e309, , , , , , 0x")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := parseTelemetryLine(line, time.Unix(0, 0))
		if err == nil && s.power != nil && (*s.power < 0 || math.IsNaN(*s.power) || math.IsInf(*s.power, 0)) {
			t.Fatalf("impossible power %v from %q", *s.power, line)
		}
		parseGPUInfo(line)
	})
}

// TestPowerFigures integrates known samples: 4 GPUs, each at a steady power
// but GPU 2 throttling half way.
func TestPowerFigures(t *testing.T) {
	start := time.Unix(1000, 0)
	var samples []gpuSample
	for tick := range 4 { // samples at 0, 0.5, 1.0, 1.5 s of a 2 s window
		at := start.Add(time.Duration(tick) * 500 * time.Millisecond)
		for gpu := range 4 {
			line := telemetryLine
			if gpu == 2 && tick >= 2 {
				line = throttledLine
			}
			s, _ := parseTelemetryLine(fmt.Sprintf(line, gpu), at)
			samples = append(samples, s)
		}
	}
	p := powerFigures(samples, start, start.Add(2*time.Second), 1000)
	// GPUs 0, 1, 3: 300 W for 2 s; GPU 2: 300 W for 1 s, 600 W for 1 s.
	want := 3*300*2.0 + 300 + 600
	if math.Abs(p.EnergyJoules-want) > 1e-9 || math.Abs(p.MeanPowerW-want/2) > 1e-9 {
		t.Errorf("energy %g J, mean %g W; want %g J, %g W", p.EnergyJoules, p.MeanPowerW, want, want/2)
	}
	if math.Abs(*p.TokSPerW-500/(want/2)) > 1e-12 || math.Abs(*p.JoulesPer1KTokens-want) > 1e-9 {
		t.Errorf("%g tok/s per W, %g J per 1K tokens", *p.TokSPerW, *p.JoulesPer1KTokens)
	}
	if len(p.GPUs) != 4 || !p.GPUs[2].PowerThrottled || !p.GPUs[2].ThermalThrottled || p.GPUs[0].PowerThrottled ||
		*p.GPUs[2].PeakPowerW != 600 || *p.GPUs[2].PeakTemperatureC != 84 || *p.GPUs[2].MeanSMClockMHz != 2100 {
		t.Errorf("per GPU %+v", p.GPUs[2])
	}
	if len(p.Trace) != 4 || p.Trace[3].PowerW != 1500 || p.Trace[0].AtSeconds != 0 || p.Trace[3].AtSeconds != 1.5 {
		t.Errorf("trace %+v", p.Trace)
	}
}

// rocm-smi --json answers in two generations of field names: a recent one
// (two MI300X), and an older two-die MI250, whose second die reports its
// power as "N/A (Secondary die)".
const (
	rocmRecent = `{"card0": {"Current Socket Graphics Package Power (W)": "712.0", "sclk clock speed:": "(2100Mhz)",
  "mclk clock speed:": "(1300Mhz)", "GPU use (%)": "100", "Temperature (Sensor edge) (C)": "N/A",
  "Temperature (Sensor junction) (C)": "78.0", "VRAM Total Memory (B)": "206158430208",
  "VRAM Total Used Memory (B)": "193273528320", "Card Series": "AMD Instinct MI300X",
  "Max Graphics Package Power (W)": "750.0"},
 "card1": {"Current Socket Graphics Package Power (W)": "698.0", "sclk clock speed:": "(2100Mhz)",
  "GPU use (%)": "99", "Temperature (Sensor junction) (C)": "75.0", "Card Series": "AMD Instinct MI300X",
  "VRAM Total Memory (B)": "206158430208", "Max Graphics Package Power (W)": "750.0"},
 "system": {"Driver version": "6.10.5"}}`
	rocmOlder = `{"card1": {"Average Graphics Package Power (W)": "N/A (Secondary die)", "GPU use (%)": "100",
  "Card series": "AMD INSTINCT MI250 (MCM) OAM AC MBA"},
 "card0": {"Average Graphics Package Power (W)": "460.0", "GPU use (%)": "100", "sclk clock speed:": "(1700Mhz)",
  "Temperature (Sensor edge) (c)": "61.0", "Card series": "AMD INSTINCT MI250 (MCM) OAM AC MBA"}}`
)

func TestParseROCm(t *testing.T) {
	cards, driver, err := parseROCm([]byte(rocmRecent))
	if err != nil || len(cards) != 2 || driver != "6.10.5" {
		t.Fatalf("%d cards, driver %q, %v", len(cards), driver, err)
	}
	var h matrixgen.Hardware
	describeGPUs(&h, []gpuInfo{cards[0].info(driver), cards[1].info(driver)})
	if h.GPU != "AMD Instinct MI300X" || h.GPUCount != 2 || h.VRAMGB != 192 || h.Driver != "6.10.5" || h.PowerLimitW != 750 {
		t.Errorf("hardware %+v", h)
	}
	at := time.Unix(1000, 0)
	s := cards[0].sample(at)
	if *s.power != 712 || *s.smClock != 2100 || *s.memClock != 1300 || *s.util != 100 || *s.temperature != 78 ||
		*s.memUsed != 184320 || s.index != 0 {
		t.Errorf("card0 %+v", s)
	}
	if s := cards[1].sample(at); s.memUsed != nil || s.memClock != nil || s.index != 1 {
		t.Errorf("card1 %+v", s)
	}
	cards, _, err = parseROCm([]byte(rocmOlder))
	if err != nil || len(cards) != 2 || cards[0].index != 0 {
		t.Fatalf("%+v, %v", cards, err)
	}
	if s := cards[0].sample(at); *s.power != 460 || *s.temperature != 61 || *s.smClock != 1700 {
		t.Errorf("older card0 %+v", s)
	}
	if s := cards[1].sample(at); s.power != nil || *s.util != 100 {
		t.Errorf("second die %+v", s)
	}
	// Two dies, one reporting the power of both: the window's energy is
	// the first die's figure alone, counted once.
	p := powerFigures([]gpuSample{cards[0].sample(at), cards[1].sample(at)}, at, at.Add(time.Second), 100)
	if p.EnergyJoules != 460 || len(p.GPUs) != 2 || p.GPUs[1].MeanPowerW != nil {
		t.Errorf("two dies: %+v", p)
	}
	for _, bad := range []string{"", "[]", `{"card0": "x"}`, "{"} {
		if _, _, err := parseROCm([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseROCm(f *testing.F) {
	f.Add([]byte(rocmRecent))
	f.Add([]byte(rocmOlder))
	f.Add([]byte(`{"card7": {"GPU use (%)": 12, "sclk clock speed:": "(1e400Mhz)"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cards, _, err := parseROCm(b)
		if err != nil {
			return
		}
		for _, c := range cards {
			s := c.sample(time.Unix(0, 0))
			for _, v := range []*float64{s.power, s.smClock, s.memClock, s.util, s.memUsed, s.temperature} {
				if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
					t.Fatalf("impossible value %v from %q", *v, b)
				}
			}
			c.info("")
		}
	})
}
