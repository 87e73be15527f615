package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/hostile"
	"github.com/matrixgen/matrixgen/sim"
)

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
`, gpus, mode, "%d, NVIDIA RTX PRO 6000 Blackwell Server Edition, 97887, 580.95.05, 600.00, 600.00, 5, 16",
		"%d, 300.00, 2400, 12000, 95, 80213, 61, 0x0000000000000000")
	if err := hostile.WriteExecutable(path, script); err != nil {
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

// silentSampler is a GPU sampler that gives no window a reading, and has
// stopped once stopped is set.
type silentSampler struct{ stopped error }

func (s *silentSampler) Window(time.Time, time.Time, int) (*matrixgen.Power, string) {
	why := "no reading: nvidia-smi gave no sample in the window"
	if s.stopped != nil {
		why += "; " + s.stopped.Error()
	}
	return nil, why
}

func (s *silentSampler) Stopped() error { return s.stopped }

// TestPowerSaidOnce: windows without a reading each say why, and the log
// says it once; a sampler that stops is said once more, as stopped.
func TestPowerSaidOnce(t *testing.T) {
	var log strings.Builder
	say := func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }
	tel := &silentSampler{}
	sw := &sweeper{run: &matrixgen.Run{}, logf: say, warnf: say, tel: tel}
	window, tokens := 0.6, 100
	for cell := range 4 {
		if cell == 2 {
			tel.stopped = errors.New("nvidia-smi stopped")
		}
		d := matrixgen.Decode{WindowStart: time.Now(), WindowSeconds: &window, TotalTokS: new(400.0), OutputTokens: &tokens}
		if p, why := sw.power(d); p != nil || !strings.HasPrefix(why, "no reading: nvidia-smi gave no sample") {
			t.Errorf("cell %d: power %+v, missing %q", cell, p, why)
		}
	}
	if n := strings.Count(log.String(), "no power figures"); n != 2 {
		t.Errorf("said %d times, want once without a reading and once stopped:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "GPU telemetry stopped (nvidia-smi stopped)") {
		t.Errorf("the stop was not said:\n%s", log.String())
	}
}
