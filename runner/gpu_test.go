package runner

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/sim"
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

// fakeNvidiaSMI writes a stand-in for nvidia-smi that answers the runner's
// queries in the real format for gpus GPUs: steady at 300 W each, and, in
// mode "die", a sampler that exits after three seconds.
func fakeNvidiaSMI(t *testing.T, gpus int, mode string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nvidia-smi")
	script := fmt.Sprintf(`#!/bin/sh
gpus=%d
mode=%s
case "$*" in
*index,name*)
  i=0; while [ $i -lt $gpus ]; do printf '%s\n' $i; i=$((i+1)); done ;;
*-lms*)
  n=0
  while :; do
    i=0; while [ $i -lt $gpus ]; do printf '%s\n' $i; i=$((i+1)); done
    n=$((n+1))
    if [ "$mode" = die ] && [ $n -ge 6 ]; then echo "Unable to determine the device handle for GPU0" >&2; exit 15; fi
    sleep 0.5
  done ;;
"")
  echo "| NVIDIA-SMI 580.95.05   Driver Version: 580.95.05   CUDA Version: 13.0 |" ;;
esac
`, gpus, mode, gpuInfoLine, telemetryLine)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTelemetryThroughTheSweep runs real sweeps with the fake nvidia-smi:
// one GPU and four, each cell's power figures from the samples, the panel
// detected; a sampler that dies mid-run leaves the later cells without
// power figures and the run going; a machine without nvidia-smi says so.
func TestTelemetryThroughTheSweep(t *testing.T) {
	for _, tt := range []struct {
		name, mode string
		gpus       int
	}{{"one GPU", "steady", 1}, {"four GPUs", "steady", 4}, {"sampler dies", "die", 1}, {"no nvidia-smi", "missing", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			tool := filepath.Join(t.TempDir(), "no-such-nvidia-smi")
			if tt.mode != "missing" {
				tool = fakeNvidiaSMI(t, tt.gpus, tt.mode)
			}
			p := testProfile()
			p.Prefill.RequestOverheadMs = 20
			_, url := startSim(t, p)
			settings := testSettings(url, []string{"1K"}, []int{1, 2}, 1500*time.Millisecond)
			if tt.mode == "die" {
				settings.Sweep.Concurrency = []int{1, 2, 4}
			}
			var log bytes.Buffer
			run, err := Run(context.Background(), Options{Settings: settings, File: filepath.Join(t.TempDir(), "r.json"), Log: &log, gpuTool: tool})
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			h := run.Hardware
			switch tt.mode {
			case "missing":
				if strings.Count(log.String(), "no GPU telemetry") != 1 || h.Type != "CPU" || h.GPU != "" {
					t.Errorf("without nvidia-smi: hardware %+v\n%s", h, log.String())
				}
				for _, d := range run.Decode {
					if d.Power != nil || d.Status != matrixgen.StatusValid {
						t.Errorf("1K × %d: %s, power %+v", d.Concurrency, d.Status, d.Power)
					}
				}
				return
			case "die":
				if !strings.Contains(log.String(), "GPU telemetry stopped") {
					t.Errorf("the sampler's end was not said:\n%s", log.String())
				}
				last := run.Decode[len(run.Decode)-1]
				if last.Power != nil || last.Status != matrixgen.StatusValid {
					t.Errorf("the last cell, after the sampler died: %s, power %+v", last.Status, last.Power)
				}
				return
			}
			if h.GPUCount != tt.gpus || h.GPU != "RTX PRO 6000 Blackwell Server Edition" || h.CUDA != "13.0" || h.VRAMGB != 96 ||
				h.IdlePowerW == nil || *h.IdlePowerW != 300*float64(tt.gpus) {
				t.Errorf("hardware %+v (idle %v)", h, show(h.IdlePowerW))
			}
			for _, d := range run.Decode {
				pw := d.Power
				if pw == nil || len(pw.GPUs) != tt.gpus {
					t.Errorf("1K × %d: power %+v", d.Concurrency, pw)
					continue
				}
				// Steady 300 W a GPU: the figures follow exactly.
				watts := 300 * float64(tt.gpus)
				// (To a nanosecond's rounding of the window's length.)
				if !within(pw.MeanPowerW, watts, 1e-6) || !within(pw.EnergyJoules, watts**d.WindowSeconds, 1e-6) ||
					!within(*pw.TokSPerW, *d.TotalTokS/watts, 1e-6) {
					t.Errorf("1K × %d: %g W, %g J, %g tok/s per W", d.Concurrency, pw.MeanPowerW, pw.EnergyJoules, *pw.TokSPerW)
				}
			}
		})
	}
}

// TestEnergyFollowsTheLoad: the sim's power follows its load (idle 100 W,
// 50 W a running request, over two GPUs), read through a stand-in
// nvidia-smi; streams that never finish inside the window keep the load
// steady, so each cell's power and energy are known exactly.
func TestEnergyFollowsTheLoad(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("nvidia-smi", func(t *testing.T) { energyFollowsTheLoad(t, exe, "Sim GPU") })
	// The same test binary under the name rocm-smi answers in its dialect:
	// a process a sample, so a sample's moment is known to within the
	// process's start, too coarse for exact figures under the race detector.
	if raceEnabled {
		t.Log("rocm-smi: SKIPPED under -race, where the stand-in takes most of a window to start; the run without -race checks it")
		return
	}
	rocm := filepath.Join(t.TempDir(), "rocm-smi")
	if err := os.Symlink(exe, rocm); err != nil {
		t.Fatal(err)
	}
	t.Run("rocm-smi", func(t *testing.T) { energyFollowsTheLoad(t, rocm, "AMD Instinct MI300X") })
}

func energyFollowsTheLoad(t *testing.T, tool, gpu string) {
	p := testProfile()
	p.Prefill.RequestOverheadMs = 20
	p.Power = sim.PowerProfile{GPUs: 2, IdleW: 100, PerRequestW: 50}
	_, url := startSim(t, p)
	t.Setenv("MATRIXGEN_FAKE_SMI", url+"/sim/power")
	settings := testSettings(url, []string{"1K"}, []int{1, 4}, 1500*time.Millisecond)
	settings.Sweep.MaxOutput = 100000 // no stream ends inside a window
	var log bytes.Buffer
	run, err := Run(context.Background(), Options{Settings: settings, File: filepath.Join(t.TempDir(), "r.json"), Log: &log, gpuTool: tool})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if h := run.Hardware; h.GPUCount != 2 || h.GPU != gpu || h.IdlePowerW == nil || *h.IdlePowerW != 100 {
		t.Errorf("hardware %+v, idle %s", h, show(h.IdlePowerW))
	}
	for _, d := range run.Decode {
		pw := d.Power
		want := 100 + 50*float64(d.Concurrency)
		if pw == nil || !within(pw.MeanPowerW, want, 1e-6) || !within(pw.EnergyJoules, want**d.WindowSeconds, 1e-6) {
			t.Errorf("1K × %d: power %+v, want %g W", d.Concurrency, pw, want)
		}
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
