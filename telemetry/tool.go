package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"
)

// Every tool this package asks goes through this file, the one place that
// bounds them (a tool can hang, print without end, or leave a child holding
// its output open): it runs in a process group of its own, killed whole at
// its deadline or on interruption; the wait for its output to close is
// bounded; and past a bound on what it prints it is stopped.

// toolTimeout bounds one answer of a tool asked once.
const toolTimeout = 10 * time.Second

// toolWaitDelay bounds the wait, once a tool has ended, for its output to
// close: a child that left its process group may hold it open for ever.
const toolWaitDelay = time.Second

// maxToolAnswer bounds an answer read whole: nvidia-smi writes a hundred
// bytes a GPU, rocm-smi's JSON a few kilobytes a card.
const maxToolAnswer = 1 << 20

// maxToolLine bounds one line of a tool that answers line by line (the
// sampler): one GPU's fields are a hundred bytes.
const maxToolLine = 4096

// toolCommand is path with args, to run in its own process group, which
// is killed when ctx ends.
func toolCommand(ctx context.Context, path string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	ownProcessGroup(cmd)
	cmd.WaitDelay = toolWaitDelay
	return cmd
}

// errPastBound stops copying a tool's output once it passed its bound.
var errPastBound = errors.New("past its bound")

// toolOutput takes a tool's output: an answer kept whole (line nil), or
// handed on line by line as it comes; past limit bytes (of the answer, or
// of a line) it calls stop (which kills the tool) and refuses the rest.
type toolOutput struct {
	buf   []byte
	limit int
	line  func([]byte)
	stop  func()
	over  bool
}

func (w *toolOutput) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		line, rest, whole := w.buf, []byte(nil), false
		if w.line != nil {
			line, rest, whole = bytes.Cut(w.buf, []byte("\n"))
		}
		if len(line) > w.limit {
			w.over = true
			w.stop()
			return 0, errPastBound
		}
		if !whole {
			return len(p), nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			w.line(line)
		}
		w.buf = rest
	}
}

// askTool runs a tool once and returns what it printed, within toolTimeout
// and maxToolAnswer, killed with whatever it started when ctx ends.
func askTool(ctx context.Context, path string, args ...string) ([]byte, error) {
	name := filepath.Base(path)
	tctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	out := &toolOutput{limit: maxToolAnswer, stop: cancel}
	cmd := toolCommand(tctx, path, args)
	cmd.Stdout = out
	err := finish(cmd, cmd.Run())
	switch {
	case out.over:
		return nil, fmt.Errorf("%s printed more than %s, which is no answer", name, fmt.Sprintf("%d MB", maxToolAnswer>>20))
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case tctx.Err() != nil:
		return nil, fmt.Errorf("%s did not answer within %v", name, toolTimeout)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out.buf, nil
}

// finish is err, the end of cmd, a child left holding its output killed:
// the tool itself answered, and its answer stands.
func finish(cmd *exec.Cmd, err error) error {
	if errors.Is(err, exec.ErrWaitDelay) {
		killProcessGroup(cmd)
		return nil
	}
	return err
}

// streamTool starts a tool that answers line by line, calling line with
// each (from one goroutine), killed with whatever it started when ctx ends
// or a line passes maxToolLine. wait waits for its end and says why.
func streamTool(ctx context.Context, path string, args []string, line func([]byte)) (wait func() error, err error) {
	name := filepath.Base(path)
	ctx, cancel := context.WithCancel(ctx)
	out := &toolOutput{limit: maxToolLine, line: line, stop: cancel}
	cmd := toolCommand(ctx, path, args)
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return func() error {
		defer cancel()
		err := finish(cmd, cmd.Wait())
		switch {
		case out.over:
			return fmt.Errorf("%s printed a line longer than %d bytes", name, maxToolLine)
		case err != nil:
			return fmt.Errorf("%s stopped: %w", name, err)
		}
		return fmt.Errorf("%s stopped", name)
	}, nil
}
