package matrixgen

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Status classifies one measurement. It is a typed string so that run files,
// TOML and Go code all share one closed set: an unknown status in a run file is
// an error, not a silently blank cell.
type Status string

// The statuses a measurement can have. The methodology page defines what each means.
const (
	StatusValid        Status = "valid"
	StatusLooped       Status = "looped"
	StatusQueued       Status = "queued"
	StatusOverCapacity Status = "over_capacity"
	StatusError        Status = "error"
	// StatusNotRun marks a cell the sweep planned but has not reached yet, so a
	// run in progress is still a complete, valid file.
	StatusNotRun Status = "not_run"
)

// Statuses lists every status in the order a legend shows them.
var Statuses = []Status{StatusValid, StatusQueued, StatusLooped, StatusOverCapacity, StatusError, StatusNotRun}

// statusWords are each status's label (as the matrix pages say it) and legend.
var statusWords = map[Status]struct{ label, explanation string }{
	StatusValid:        {"Valid", "the measurement ran as planned and its figures can be trusted."},
	StatusLooped:       {"Looped", "the model kept repeating the same text, so the benchmark discarded this measurement."},
	StatusQueued:       {"Requests queued", "the server could not run all requests at once, so some waited in a queue."},
	StatusOverCapacity: {"Over capacity", "not run because this many requests at this context would exceed the server's KV cache."},
	StatusError:        {"Error", "the server failed this measurement; the reason is kept."},
	StatusNotRun:       {"Not run", "the sweep has not reached this measurement yet."},
}

// Label is the status in the words the matrix pages use; an unknown one as
// it is written.
func (s Status) Label() string { return cmp.Or(statusWords[s].label, string(s)) }

// Explanation is the one-sentence legend for the status; "" for an unknown one.
func (s Status) Explanation() string { return statusWords[s].explanation }

// Known reports whether s is one of the defined statuses.
func (s Status) Known() bool { return slices.Contains(Statuses, s) }

// MarshalText implements encoding.TextMarshaler and refuses unknown statuses,
// so a bad value never reaches a file.
func (s Status) MarshalText() ([]byte, error) {
	if !s.Known() {
		return nil, fmt.Errorf("unknown status %q", string(s))
	}
	return []byte(s), nil
}

// UnmarshalText implements encoding.TextUnmarshaler for JSON and TOML.
func (s *Status) UnmarshalText(b []byte) error {
	v := Status(b)
	if !v.Known() {
		names := strings.Trim(strings.ReplaceAll(fmt.Sprint(Statuses), " ", ", "), "[]")
		return fmt.Errorf("unknown status %q (want one of %s)", string(b), names)
	}
	*s = v
	return nil
}
