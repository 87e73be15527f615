// Package prom reads the Prometheus text an inference server exposes at
// /metrics leniently, for hints (queues, KV use, counters): a line that
// does not parse is skipped, and what one answer may cost is bounded.
package prom

import (
	"bufio"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Sample is one metric line of Prometheus text: a name, its labels, a value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// MaxSamples bounds the samples kept of one answer: a sample costs far
// more than its line (16 MB of `a{b=""} 1` took 600 MB).
const MaxSamples = 50_000

// Parse reads Prometheus text exposition format, `name{label="v",…} value
// [timestamp]` (label escapes \\, \", \n honoured), skipping comments, blank
// lines and lines that do not parse.
func Parse(r io.Reader) []Sample {
	var out []Sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for len(out) < MaxSamples && sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if s, ok := parseLine(line); ok {
			out = append(out, s)
		}
	}
	return out
}

func parseLine(line string) (Sample, bool) {
	s := Sample{}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, false
	}
	s.Name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		labels, after, ok := parseLabels(rest[1:])
		if !ok {
			return s, false
		}
		s.Labels, rest = labels, after
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, false
	}
	var err error
	s.Value, err = strconv.ParseFloat(fields[0], 64)
	return s, err == nil
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
			c := s[j]
			if c == '\\' && j+1 < len(s) {
				j++
				if c = s[j]; c == 'n' {
					c = '\n'
				}
			}
			val.WriteByte(c)
		}
		if j >= len(s) {
			return nil, "", false
		}
		labels[name] = val.String()
		s = s[j+1:]
	}
}

// Sum adds the values of every sample named name (data-parallel engines
// report one per engine).
func Sum(samples []Sample, name string) (float64, bool) {
	total, found := 0.0, false
	for _, s := range samples {
		if s.Name == name {
			total += s.Value
			found = true
		}
	}
	return total, found
}

// Label returns a label of the first sample named name.
func Label(samples []Sample, name, key string) (string, bool) {
	for _, s := range samples {
		if s.Name == name {
			v, ok := s.Labels[key]
			return v, ok
		}
	}
	return "", false
}

// Histogram names a Prometheus histogram and, where one metric holds
// several (SGLang's stages), the label that picks the series.
type Histogram struct{ Name, LabelKey, LabelValue string }

// String is how a run names it: the metric and its series.
func (h Histogram) String() string {
	if h.LabelKey == "" {
		return h.Name
	}
	return h.Name + "{" + h.LabelKey + "=\"" + h.LabelValue + "\"}"
}

// Totals is a histogram's sum and count per series (its labels but "le"),
// so data-parallel engines or SGLang's ranks each have their own.
type Totals map[string]struct{ Sum, Count float64 }

// Totals reads h's series from samples; empty when the server keeps no
// such histogram.
func (h Histogram) Totals(samples []Sample) Totals {
	out := Totals{}
	for _, s := range samples {
		part, ok := strings.CutPrefix(s.Name, h.Name+"_")
		if !ok || part != "sum" && part != "count" || (h.LabelKey != "" && s.Labels[h.LabelKey] != h.LabelValue) {
			continue
		}
		key := seriesKey(s.Labels)
		t := out[key]
		if part == "sum" {
			t.Sum = s.Value
		} else {
			t.Count = s.Value
		}
		out[key] = t
	}
	return out
}

// seriesKey names a series by its labels, in order.
func seriesKey(labels map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if k != "le" {
			b.WriteString(k + "=" + strconv.Quote(labels[k]) + ",")
		}
	}
	return b.String()
}
