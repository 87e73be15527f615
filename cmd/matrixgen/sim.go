package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/matrixgen/matrixgen/internal/plural"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/sim"
)

var simCommand = command{
	summary: "serve a simulated inference server of known speed",
	usage: `
Usage: matrixgen sim [options]

Serves a loopback inference server that speaks vLLM's OpenAI-compatible API
(/v1/chat/completions, /v1/models, /tokenize, /metrics, /version, /health)
and behaves as its profile says: prefill and decode speed, KV capacity and
queueing, prefix caching, speculative decoding, loops and faults. Use it to
try matrixgen without a GPU, or to check what a client measures against
what the server knows it sent (GET /sim/trace, with -trace).

It warns when this machine cannot keep to the profile's timing.
`,
	examples: `
  matrixgen sim
  matrixgen sim -addr 127.0.0.1:8000 -profile examples/sim-profile.toml -trace 1000
`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		addr := fs.String("addr", "127.0.0.1:8000", "`host:port` to listen on")
		profile := fs.String("profile", "", "profile `file` (TOML, as examples/sim-profile.toml; default: the built-in profile)")
		trace := fs.Int("trace", 0, "keep the trace of the last `n` requests for GET /sim/trace (0: off)")
		return func(args []string, stdout, stderr io.Writer) error {
			p := sim.DefaultProfile()
			if *profile != "" {
				var err error
				if p, err = loadSimProfile(*profile); err != nil {
					return err
				}
			}
			ctx, stop := interruptible()
			defer stop()
			ln, err := net.Listen("tcp", *addr)
			if err != nil {
				return err
			}
			return serveSim(ctx, ln, p, cmp.Or(max(*trace, 0), -1), stdout) // -1: no trace
		}
	},
}

// serveSim serves a sim on ln until ctx ends, warning when the machine
// cannot keep to the profile's timing.
func serveSim(ctx context.Context, ln net.Listener, p sim.Profile, traceLimit int, stdout io.Writer) error {
	s, err := sim.New(p, sim.Options{TraceLimit: traceLimit})
	if err != nil {
		return err
	}
	defer s.Close()
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "matrixgen sim: serving %q (%s dialect) on http://%s\n", p.Model, cmp.Or(p.Flavour, sim.FlavourVLLM), ln.Addr())
	fmt.Fprintf(stdout, "  single stream about %.0f tok/s, KV cache %s, %s at once\n",
		p.SingleStreamTokS(), plural.Count(p.KV.CapacityTokens, "token", "tokens"), plural.Count(p.KV.MaxRunning, "request", "requests"))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	var warned sim.Timing
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			t := s.Timing()
			if lost := t.Lost - warned.Lost; lost > 0 && !t.KeepingUp() {
				fmt.Fprintf(stdout, "matrixgen sim: this machine cannot keep up with the profile: %v of %v behind schedule (%s); its figures run slow\n",
					t.Lost.Round(time.Millisecond), t.Scheduled.Round(time.Millisecond), plural.Count(t.LateSteps, "late step", "late steps"))
				warned = t
			}
		case <-ctx.Done():
			shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			fmt.Fprintln(stdout, "matrixgen sim: stopped")
			return nil
		}
	}
}

// loadSimProfile reads a profile file over the sim's defaults.
func loadSimProfile(name string) (sim.Profile, error) {
	p := sim.DefaultProfile()
	if err := config.LoadFile(name, &p, func() error { return p.Validate() }); err != nil {
		return sim.Profile{}, err
	}
	return p, nil
}
