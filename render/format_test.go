package render

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

func TestTokS(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{4601, "4,601.0"},
		{6011.04, "6,011.0"},
		{445.7, "445.7"},
		{9999.94, "9,999.9"},
		{9999.96, "10K"},
		{10000, "10K"},
		{33000, "33K"},
		{32994, "33K"},
		{31900, "31.9K"},
		{10400, "10.4K"},
		{1234567, "1,234.6K"},
		{0, "0.0"},
	}
	for _, tt := range tests {
		if got := tokS(tt.in); got != tt.want {
			t.Errorf("TokS(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMillis(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1778, "1,778 ms"},
		{171436, "171,436 ms"},
		{256, "256 ms"},
		{100, "100 ms"},
		{99.96, "100 ms"},
		{99.94, "99.9 ms"},
		{2.2, "2.2 ms"},
		{24.1, "24.1 ms"},
		{0, "0.0 ms"},
	}
	for _, tt := range tests {
		if got := millis(tt.in); got != tt.want {
			t.Errorf("Millis(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOtherFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{secs(30), "30.0 s"},
		{secs(29.94), "29.9 s"},
		{planSeconds(30), "30 s"},
		{planSeconds(2.5), "2.5 s"},
		{decimal1(1011.5), "1,011.5"},
		{decimal1(-1234.56), "-1,234.6"},
		{decimal1(15.94), "15.9"},
		{count(13370), "13,370"},
		{count(207043), "207,043"},
		{count(1000000), "1,000,000"},
		{count(0), "0"},
		{count(-4096), "-4,096"},
		{optional[float64](nil, decimal1), "—"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestGrouped(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{decimal1(-1234.56), "-1,234.6"},
		{decimal1(1e7), "10,000,000.0"},
		{decimal1(999.94), "999.9"},
		{decimal1(-0.04), "-0.0"},
		{count(-1000), "-1,000"},
		{count(999), "999"},
		{count(1234567), "1,234,567"},
		{secs(1234.5), "1,234.5 s"},
		{millis(123456.4), "123,456 ms"},
		{millis(12.34), "12.3 ms"},
		{grouped([]byte("-12345.678"), ""), "-12,345.678"},
		{grouped(nil, ""), ""},
		// A spread of a figure next to nothing is infinite: it read "±+,Inf %".
		{decimal1(math.Inf(1)), "+Inf"},
		{decimal1(math.Inf(-1)), "-Inf"},
		{secs(math.NaN()), "NaN s"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestPlainIsHowJSONWritesNumbers: a figure in runs.csv or a page's data
// reads as the same figure in run.json, at every scale, exponents
// included ("5e-7", not Go's "5e-07").
func TestPlainIsHowJSONWritesNumbers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 22))
	values := []float64{0, 0.25, 412, 5e-7, 1e-6, 9.99e-7, 1e21, 1e20, 5e-324, math.MaxFloat64, -3e-9, 123456789.125}
	for range 2000 {
		values = append(values, math.Float64frombits(rng.Uint64()))
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			continue // NaN and the infinities: no JSON number
		}
		if got := plain(v); got != string(want) {
			t.Errorf("plain(%v) = %s, JSON writes %s", v, got, want)
		}
	}
}
