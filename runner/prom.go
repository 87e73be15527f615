package runner

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// sample is one metric line of Prometheus text: a name, its labels, a value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// maxPromSamples bounds the samples kept of one answer: a sample costs far
// more than its line (16 MB of `a{b=""} 1` took 600 MB), and a server
// that reports more than this is not one the runner reads for hints.
const maxPromSamples = 50_000

// parseProm reads Prometheus text exposition format: comments and blank
// lines skipped, `name{label="v",…} value [timestamp]` read, lines that do
// not parse skipped (a metrics endpoint is read for hints, never trusted to
// be well formed). Escapes in label values (\\, \", \n) are honoured.
func parseProm(r io.Reader) []sample {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for len(out) < maxPromSamples && sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if s, ok := parsePromLine(line); ok {
			out = append(out, s)
		}
	}
	return out
}

func parsePromLine(line string) (sample, bool) {
	s := sample{}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, false
	}
	s.name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		labels, after, ok := parseLabels(rest[1:])
		if !ok {
			return s, false
		}
		s.labels, rest = labels, after
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, false
	}
	s.value = v
	return s, true
}

// parseLabels reads `a="x",b="y"}` and returns what follows the brace.
func parseLabels(s string) (map[string]string, string, bool) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			return nil, "", false
		}
		if s[0] == '}' {
			return labels, s[1:], true
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return nil, "", false
		}
		name := strings.TrimSpace(s[:eq])
		var val strings.Builder
		j := eq + 2
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' && j+1 < len(s) {
				j++
				switch s[j] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[j])
				}
				continue
			}
			val.WriteByte(s[j])
		}
		if j >= len(s) {
			return nil, "", false
		}
		labels[name] = val.String()
		s = s[j+1:]
	}
}

// sum adds the values of every sample named name (data-parallel engines
// report one per engine).
func sum(samples []sample, name string) (float64, bool) {
	total, found := 0.0, false
	for _, s := range samples {
		if s.name == name {
			total += s.value
			found = true
		}
	}
	return total, found
}

// label returns a label of the first sample named name.
func label(samples []sample, name, key string) (string, bool) {
	for _, s := range samples {
		if s.name == name {
			v, ok := s.labels[key]
			return v, ok
		}
	}
	return "", false
}

// histogramTotals is a histogram's sum and count per series: a series is
// its labels but the bucket's "le", so data-parallel engines or SGLang's
// tensor-parallel ranks each have their own.
type histogramTotals map[string]struct{ sum, count float64 }

// readHistogram reads h's series from samples; empty when the server keeps
// no such histogram.
func readHistogram(samples []sample, h promHistogram) histogramTotals {
	out := histogramTotals{}
	for _, s := range samples {
		base, part := s.name, ""
		if b, ok := strings.CutSuffix(s.name, "_sum"); ok {
			base, part = b, "sum"
		} else if b, ok := strings.CutSuffix(s.name, "_count"); ok {
			base, part = b, "count"
		}
		if base != h.name || part == "" || (h.labelKey != "" && s.labels[h.labelKey] != h.labelValue) {
			continue
		}
		key := seriesKey(s.labels)
		t := out[key]
		if part == "sum" {
			t.sum = s.value
		} else {
			t.count = s.value
		}
		out[key] = t
	}
	return out
}

// seriesKey names a series by its labels, in order.
func seriesKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if k != "le" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + strconv.Quote(labels[k]) + ",")
	}
	return b.String()
}

// oneObservation is the value the histogram took in from before to after,
// when exactly one request was observed: each series that moved moved by
// one observation (tensor-parallel ranks each observe the same request:
// their values are averaged). Anything else (another request finishing in
// between, a restart resetting the counts) leaves the figure unknown.
func oneObservation(before, after histogramTotals) (float64, bool) {
	var values []float64
	for key, a := range after {
		b, seen := before[key]
		switch dc := a.count - b.count; {
		case dc == 0:
		case dc == 1 && seen && a.sum >= b.sum && !math.IsInf(a.sum, 0):
			values = append(values, a.sum-b.sum)
		default: // a series born since, or one that moved otherwise
			return 0, false
		}
	}
	if len(values) == 0 {
		return 0, false
	}
	// Ranks observe one request alike; series that disagree observed
	// different ones.
	mean := 0.0
	for _, v := range values {
		mean += v / float64(len(values))
	}
	for _, v := range values {
		if math.Abs(v-mean) > 0.05*mean {
			return 0, false
		}
	}
	return mean, mean > 0 && !math.IsInf(mean, 0)
}
