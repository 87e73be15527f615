package matrixgen

import "testing"

func TestCountStatuses(t *testing.T) {
	r := &Run{Prefill: []Prefill{{Status: StatusValid}, {Status: StatusNotRun}},
		Decode: []Decode{{Status: StatusLooped}, {Status: StatusNotRun}, {Status: StatusValid}}}
	if n := r.CountStatuses(func(s Status) bool { return s == StatusNotRun }); n != 2 {
		t.Errorf("%d not run, want 2", n)
	}
	if n := r.CountStatuses(func(s Status) bool { return s == StatusValid }); n != 2 {
		t.Errorf("%d valid, want 2", n)
	}
	if n := r.CountStatuses(func(s Status) bool { return s != StatusNotRun }); n != 3 {
		t.Errorf("%d measured, want 3", n)
	}
}
