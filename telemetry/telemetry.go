// Package telemetry reads this machine's hardware and its GPUs' power,
// clocks and heat from the vendors' tools (nvidia-smi, rocm-smi), each run
// within bounds, and sums a window's samples into its power figures.
package telemetry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/matrixgen/matrixgen"
)

// telemetryFields are what each sample reads of each GPU, in order.
const telemetryFields = "index,power.draw,clocks.sm,clocks.mem,utilization.gpu,memory.used,temperature.gpu,clocks_throttle_reasons.active"

// Interval is how often the GPUs are sampled: nvidia-smi's -lms, and the
// rounds of a tool asked once a call.
const Interval = 500 * time.Millisecond

// Clock throttle reasons (NVML's nvmlClocksThrottleReason bits) that mean
// the GPU was held back by power or by heat.
const (
	throttlePower   = 0x04 | 0x80 // software power cap, hardware power brake
	throttleThermal = 0x20 | 0x40 // software and hardware thermal slowdown
)

// gpuSample is one line of the sampler: one GPU at one moment. Fields the
// GPU did not report are nil.
type gpuSample struct {
	at                                      time.Time
	index                                   int
	power, smClock, memClock, util, memUsed *float64
	temperature                             *float64
	throttle                                uint64
}

// parseTelemetryLine reads one line of the telemetryFields query.
func parseTelemetryLine(line string, at time.Time) (gpuSample, error) {
	f := csvFields(line)
	if len(f) != 8 {
		return gpuSample{}, fmt.Errorf("%d fields, want 8: %q", len(f), line)
	}
	idx, err := strconv.Atoi(f[0])
	if err != nil || idx < 0 {
		return gpuSample{}, fmt.Errorf("index %q", f[0])
	}
	s := gpuSample{at: at, index: idx}
	for i, dst := range []**float64{&s.power, &s.smClock, &s.memClock, &s.util, &s.memUsed, &s.temperature} {
		v, err := optNumber(f[1+i])
		if err != nil {
			return gpuSample{}, err
		}
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
			return gpuSample{}, fmt.Errorf("impossible value %q", f[1+i])
		}
		*dst = v
	}
	if r := f[7]; !notReported(r) {
		bits, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(r), "0x"), 16, 64)
		if err != nil {
			return gpuSample{}, fmt.Errorf("throttle reasons %q", r)
		}
		s.throttle = bits
	}
	return s, nil
}

// Sampler runs one GPU sampler for the whole run and keeps its samples
// until the window they belong to has taken them.
type Sampler struct {
	tool    string // the tool's name, for what is said of it
	mu      sync.Mutex
	samples []gpuSample
	err     error // why the sampler stopped, once it has
	// refused is why the last answer or sample this package refused was
	// refused, "" while none was: a window without power says it.
	refused string
	done    chan struct{}
}

// maxSamples bounds what telemetry keeps when no cell takes its samples
// (a long prefill): an hour of eight GPUs at two samples a second.
const maxSamples = 8 * 2 * 3600

// ErrNoTool is a machine without the GPU tool: no telemetry to expect.
var ErrNoTool = errors.New("no GPU tool")

// Start starts the sampler. Its error wraps ErrNoTool when this
// machine has no such tool. It stops with ctx.
func Start(ctx context.Context, tool string) (*Sampler, error) {
	if tool == NoTool {
		return nil, fmt.Errorf("%w: not asked for", ErrNoTool)
	}
	path, err := exec.LookPath(tool)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoTool, err)
	}
	t := &Sampler{tool: filepath.Base(path), done: make(chan struct{})}
	var wait func() error
	if isROCm(tool) {
		first, err := rocmSamples(ctx, path) // the first answer must come
		if err != nil {
			return nil, err
		}
		t.add(first...)
		wait = func() error { return t.poll(ctx, path) }
	} else if wait, err = streamTool(ctx, path, []string{"--query-gpu=" + telemetryFields, "--format=csv,noheader,nounits",
		"-lms", strconv.Itoa(int(Interval / time.Millisecond))}, t.line); err != nil {
		return nil, err
	}
	go func() {
		defer close(t.done)
		err := wait()
		t.stop(cmp.Or(ctx.Err(), err))
	}()
	return t, nil
}

// line takes one line of the sampler as it comes; a line it cannot read is
// refused, not fatal (a driver message among the samples).
func (t *Sampler) line(line []byte) {
	s, err := parseTelemetryLine(string(line), time.Now())
	if err != nil {
		t.refuse(err)
		return
	}
	t.add(s)
}

// refuse notes why an answer was not taken.
func (t *Sampler) refuse(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refused = err.Error()
}

// add keeps the samples a GPU can give (check), at most maxSamples of
// them, and refuses the others, whichever tool gave them.
func (t *Sampler) add(samples ...gpuSample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range samples {
		if err := s.check(); err != nil {
			t.refused = fmt.Sprintf("GPU %d: %v", s.index, err)
			continue
		}
		t.samples = append(t.samples, s)
	}
	if len(t.samples) > maxSamples {
		t.samples = slices.Delete(t.samples, 0, len(t.samples)-maxSamples)
	}
}

// check refuses a sample no GPU can give: a value that is not a finite
// number of at least zero, or board power past matrixgen.MaxBoardPowerW.
func (s gpuSample) check() error {
	for _, v := range []*float64{s.power, s.smClock, s.memClock, s.util, s.memUsed, s.temperature} {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
			return fmt.Errorf("impossible value %v", *v)
		}
	}
	if s.power != nil && *s.power > matrixgen.MaxBoardPowerW {
		return fmt.Errorf("%g W is more than a GPU can draw (%d W at most)", *s.power, matrixgen.MaxBoardPowerW)
	}
	return nil
}

// Wait waits for the sampler to end, once told to; nil waits for nothing.
func (t *Sampler) Wait() {
	if t != nil {
		<-t.done
	}
}

// maxPollFailures is how many rounds in a row a polled tool may fail
// before the sampler counts as stopped.
const maxPollFailures = 3

// poll asks a tool that answers once a call (rocm-smi) every Interval,
// or at once when an answer took longer, until ctx ends or it fails (Start
// records an interruption as such, whatever failed in it).
func (t *Sampler) poll(ctx context.Context, path string) error {
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for failures := 0; ; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		samples, err := rocmSamples(ctx, path)
		if err == nil {
			failures = 0
			t.add(samples...)
			continue
		}
		t.refuse(err)
		if failures++; failures >= maxPollFailures {
			return fmt.Errorf("%s: %d answers in a row failed, the last: %v", t.tool, failures, err)
		}
	}
}

// stop records why the sampler stopped.
func (t *Sampler) stop(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.err = err
}

// Stopped says why the sampler stopped, or nil while it runs.
func (t *Sampler) Stopped() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// take returns the samples from start to end and forgets every sample
// before end: each window takes its own, once.
func (t *Sampler) take(start, end time.Time) []gpuSample {
	t.mu.Lock()
	defer t.mu.Unlock()
	var in []gpuSample
	keep := t.samples[:0]
	for _, s := range t.samples {
		if !s.at.Before(start) && !s.at.After(end) {
			in = append(in, s)
		}
		if s.at.After(end) {
			keep = append(keep, s)
		}
	}
	t.samples = keep
	return in
}

// powerFigures sums up a window's samples per GPU, and their energy: power
// integrated over time, each sample holding until the next (or the edges).
func powerFigures(samples []gpuSample, start, end time.Time, outputTokens int) *matrixgen.Power {
	if len(samples) == 0 || !end.After(start) {
		return nil
	}
	byGPU := map[int][]gpuSample{}
	for _, s := range samples {
		byGPU[s.index] = append(byGPU[s.index], s)
	}
	length := end.Sub(start).Seconds()
	p := &matrixgen.Power{}
	for _, idx := range slices.Sorted(maps.Keys(byGPU)) {
		series := byGPU[idx]
		w := matrixgen.GPUWindow{Index: idx, Samples: len(series)}
		var energy, covered, sumClock, sumUtil float64
		var nClock, nUtil int
		for i, s := range series {
			if s.power != nil {
				from, to := s.at, end
				if i == 0 {
					from = start
				}
				if i+1 < len(series) {
					to = series[i+1].at
				}
				d := to.Sub(from).Seconds()
				energy += *s.power * d
				covered += d
			}
			w.PeakPowerW = maxPtr(w.PeakPowerW, s.power)
			if s.smClock != nil {
				sumClock += *s.smClock
				nClock++
			}
			if s.util != nil {
				sumUtil += *s.util
				nUtil++
			}
			w.PeakMemoryMiB = maxPtr(w.PeakMemoryMiB, s.memUsed)
			w.PeakTemperatureC = maxPtr(w.PeakTemperatureC, s.temperature)
			w.PowerThrottled = w.PowerThrottled || s.throttle&throttlePower != 0
			w.ThermalThrottled = w.ThermalThrottled || s.throttle&throttleThermal != 0
		}
		if covered > 0 {
			w.MeanPowerW = new(energy / covered)
			p.EnergyJoules += energy
		}
		if nClock > 0 {
			w.MeanSMClockMHz = new(sumClock / float64(nClock))
		}
		if nUtil > 0 {
			w.MeanUtilization = new(sumUtil / float64(nUtil))
		}
		p.GPUs = append(p.GPUs, w)
	}
	if p.EnergyJoules == 0 {
		return nil // no GPU reported its power: no reading, not a zero
	}
	p.MeanPowerW = p.EnergyJoules / length
	if outputTokens > 0 {
		p.TokSPerW = new(float64(outputTokens) / length / p.MeanPowerW)
		p.JoulesPer1KTokens = new(p.EnergyJoules / float64(outputTokens) * 1000)
	}
	p.Trace = powerTrace(samples, start)
	return p
}

// powerTrace is the power of all GPUs together, and their mean SM clock, at
// each moment the sampler read them all (a line per GPU, read together).
func powerTrace(samples []gpuSample, start time.Time) []matrixgen.PowerPoint {
	var out []matrixgen.PowerPoint
	var cur *matrixgen.PowerPoint
	var clocks, n float64
	seen := map[int]bool{}
	flush := func() {
		if cur != nil {
			if n > 0 {
				cur.SMClockMHz = new(clocks / n)
			}
			out = append(out, *cur)
		}
		cur, clocks, n, seen = nil, 0, 0, map[int]bool{}
	}
	for _, s := range samples {
		if seen[s.index] { // the next round of the sampler
			flush()
		}
		if cur == nil {
			cur = &matrixgen.PowerPoint{AtSeconds: math.Round(s.at.Sub(start).Seconds()*1000) / 1000}
		}
		seen[s.index] = true
		if s.power != nil {
			cur.PowerW += *s.power
		}
		if s.smClock != nil {
			clocks += *s.smClock
			n++
		}
	}
	flush()
	return out
}

// maxPtr is the larger of p and v, either of which may be nil (none).
func maxPtr(p, v *float64) *float64 {
	if v != nil && (p == nil || *v > *p) {
		return new(*v)
	}
	return p
}

// Window is the power figures of the window in which the server produced
// outputTokens tokens, or nil and why ("no reading: …"), never a zero.
func (t *Sampler) Window(start, end time.Time, outputTokens int) (*matrixgen.Power, string) {
	stopped := t.Stopped()
	samples := t.take(start, end)
	if p := powerFigures(samples, start, end, outputTokens); p != nil {
		return p, ""
	}
	t.mu.Lock()
	refused := t.refused
	t.mu.Unlock()
	why := "no reading: " + t.tool + " gave no sample in the window"
	if len(samples) > 0 {
		why = "no reading: no GPU reported its power in the window"
	}
	if stopped != nil {
		why += "; " + stopped.Error()
	}
	if refused != "" {
		why += "; its last answer refused: " + refused
	}
	return nil, why
}

// DefaultTool is nvidia-smi, or rocm-smi on a machine that has only
// that; a tool named rocm-smi… is asked in its dialect.
func DefaultTool() string {
	if _, err := exec.LookPath(nvidiaSMI); err != nil {
		if _, err := exec.LookPath(rocmSMI); err == nil {
			return rocmSMI
		}
	}
	return nvidiaSMI
}
