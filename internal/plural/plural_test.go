package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{
		{0, "0 runs"}, {1, "1 run"}, {2, "2 runs"}, {-1, "-1 runs"}, {11, "11 runs"}, {101, "101 runs"},
	} {
		if got := Count(tt.n, "run", "runs"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := Count(1, "GPU", "GPUs"); got != "1 GPU" {
		t.Errorf("Count(1, GPU) = %q", got)
	}
	if got := Noun(3, "cell", "cells"); got != "cells" {
		t.Errorf("Noun(3) = %q", got)
	}
}
