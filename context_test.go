package matrixgen

import "testing"

func TestContextLabel(t *testing.T) {
	tests := []struct {
		tokens int
		want   string
	}{
		{8192, "8K"},
		{16384, "16K"},
		{131072, "128K"},
		{1043456, "1019K"},
		{1048576, "1024K"},
		{1024, "1K"},
		{1000, "1000"},
		{8193, "8193"},
		{1, "1"},
	}
	for _, tt := range tests {
		if got := ContextLabel(tt.tokens); got != tt.want {
			t.Errorf("ContextLabel(%d) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
}

func TestParseContext(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"8K", 8192, false},
		{"8k", 8192, false},
		{"1019K", 1043456, false},
		{"1M", 1048576, false},
		{"8192", 8192, false},
		{" 16K ", 16384, false},
		{"0", 0, true},
		{"-8K", 0, true},
		{"K", 0, true},
		{"8G", 0, true},
		{"1.5K", 0, true},
		{"99999999999M", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseContext(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseContext(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestContextLabelRoundTrips(t *testing.T) {
	for _, n := range []int{8192, 1043456, 12345, 1 << 20} {
		got, err := ParseContext(ContextLabel(n))
		if err != nil || got != n {
			t.Errorf("ParseContext(ContextLabel(%d)) = %d, %v", n, got, err)
		}
	}
}

func TestStatusText(t *testing.T) {
	for _, s := range Statuses {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		var back Status
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("round trip of %q gave %q, %v", s, back, err)
		}
		if s.Label() == string(s) || s.Explanation() == "" {
			t.Errorf("%q lacks a label or an explanation", s)
		}
	}
	var s Status
	if err := s.UnmarshalText([]byte("Valid")); err == nil {
		t.Error(`"Valid" (capitalised) was accepted as a status`)
	}
	if _, err := Status("fast").MarshalText(); err == nil {
		t.Error("an unknown status was marshalled")
	}
}
