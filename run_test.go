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
	var order []Status
	for s := range r.MeasurementStatuses() {
		order = append(order, s)
		if len(order) == 3 {
			break
		}
	}
	if len(order) != 3 || order[2] != StatusLooped {
		t.Errorf("statuses %v: prefill first, and a break stops them", order)
	}
}
