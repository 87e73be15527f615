package runner

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/telemetry"
)

// gpuSampler is what the sweep asks of the GPUs' telemetry (a
// *telemetry.Sampler).
type gpuSampler interface {
	Window(start, end time.Time, outputTokens int) (*matrixgen.Power, string)
	Stopped() error
}

// startTelemetry starts the GPUs' sampler for the run and measures their
// idle power, or says once that there is none.
func (sw *sweeper) startTelemetry(ctx context.Context) *telemetry.Sampler {
	t, err := telemetry.Start(ctx, sw.o.gpuTool)
	if err != nil {
		sw.warnf("no GPU telemetry (%v): cells get no power figures", err)
		if !errors.Is(err, telemetry.ErrNoTool) {
			sw.noPower = "no reading: " + err.Error()
		}
		return nil
	}
	sw.tel = t
	// Idle power: the server is idle now (the probe waited for it); a few
	// samples of every GPU make the figure.
	start := time.Now()
	select {
	case <-ctx.Done():
		return t
	case <-time.After(4 * telemetry.Interval):
	}
	if p, why := t.Window(start, time.Now(), 0); p != nil {
		sw.run.Hardware.IdlePowerW = new(math.Round(p.MeanPowerW*10) / 10)
		sw.logf("GPU telemetry: %s, %.1f W when idle", plural.Count(len(p.GPUs), "GPU", "GPUs together"), p.MeanPowerW)
	} else if err := t.Stopped(); err != nil {
		sw.warnf("no GPU telemetry (%v): cells get no power figures", err)
		sw.noPower = "no reading: " + err.Error()
		sw.tel = nil
	} else {
		sw.logf("GPU telemetry: no idle power (%s)", why)
	}
	return t
}

// power is the cell's telemetry; or nil, and why there is none where
// telemetry was expected: no reading, never a zero.
func (sw *sweeper) power(d matrixgen.Decode) (*matrixgen.Power, string) {
	if !d.Measured() || d.WindowSeconds == nil {
		return nil, ""
	}
	if sw.tel == nil {
		return nil, sw.noPower
	}
	stopped := sw.tel.Stopped()
	if stopped != nil && !sw.telLost {
		sw.telLost = true
		sw.warnf("GPU telemetry stopped (%v): the cells from here on have no power figures", stopped)
	}
	start := d.WindowStart
	end := start.Add(time.Duration(*d.WindowSeconds * float64(time.Second)))
	tokens := 0
	if d.OutputTokens != nil {
		tokens = *d.OutputTokens
	}
	p, why := sw.tel.Window(start, end, tokens)
	if p == nil && !sw.noReadingSaid && stopped == nil {
		sw.noReadingSaid = true
		sw.logf("GPU telemetry gave a window no power reading (%s): such cells have no power figures and say why", why)
	}
	return p, why
}

// giveHardware puts the hardware the settings describe over what this
// machine said, recording in h.Given each field typed that detection had
// not found already: a page shows those as given.
func giveHardware(h *matrixgen.Hardware, d Describe) {
	give := func(field string, typed, same bool, set func()) {
		if typed && !same {
			set()
			h.Given = append(h.Given, field)
		}
	}
	sameText := func(typed, found string) bool {
		norm := func(s string) string { return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "NVIDIA ")) }
		return norm(typed) == norm(found)
	}
	give("type", d.HardwareType != "", sameText(d.HardwareType, h.Type), func() { h.Type = d.HardwareType })
	give("gpu", d.GPU != "", sameText(d.GPU, h.GPU), func() { h.GPU = d.GPU })
	give("gpu_count", d.GPUCount > 0, d.GPUCount == h.GPUCount, func() { h.GPUCount = d.GPUCount })
	give("vram_gb", d.VRAMGB > 0, d.VRAMGB == h.VRAMGB, func() { h.VRAMGB = d.VRAMGB })
	give("cpu", d.CPU != "", sameText(d.CPU, h.CPU), func() { h.CPU = d.CPU })
	give("os", d.OS != "", sameText(d.OS, h.OS), func() { h.OS = d.OS })
}
