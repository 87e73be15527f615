package render

import (
	"math"
	"strconv"
	"strings"
)

// dash stands for "not applicable" in every table, as on published matrices.
const dash = "—"

// tokS formats a throughput as published matrices do: one decimal with thousands
// separators below 10,000 ("4,601.0"), thousands with one decimal at or
// above it ("31.9K"), the decimal dropped when it is zero ("33K"). This K is
// 1,000 tokens per second, unlike a context label's 1,024 tokens.
func tokS(v float64) string {
	if r := math.Round(v*10) / 10; math.Abs(r) < 10000 {
		return decimal1(r)
	}
	k := strconv.FormatFloat(math.Round(v/100)/10, 'f', 1, 64)
	return groupThousands(strings.TrimSuffix(k, ".0")) + "K"
}

// decimal1 formats v with one decimal and thousands separators: "1,011.5".
func decimal1(v float64) string {
	return groupThousands(strconv.FormatFloat(v, 'f', 1, 64))
}

// Count formats a whole number with thousands separators: "13,370".
func Count(n int) string {
	return groupThousands(strconv.Itoa(n))
}

// millis formats a latency in milliseconds: whole milliseconds from 100 ms
// up ("1,778 ms"), one decimal below ("2.2 ms"), where a decimal matters.
func millis(ms float64) string {
	if math.Round(ms*10)/10 >= 100 {
		return groupThousands(strconv.FormatFloat(math.Round(ms), 'f', 0, 64)) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
}

// Seconds formats a measured duration with one decimal: "30.0 s".
func Seconds(s float64) string {
	return decimal1(s) + " s"
}

// planSeconds formats a planned duration, whole where it is whole: "30 s".
func planSeconds(s float64) string {
	if s == math.Trunc(s) {
		return Count(int(s)) + " s"
	}
	return Seconds(s)
}

// groupThousands puts commas between groups of three digits in the integer
// part of a formatted number, keeping its sign and decimals.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// optional formats a value that a measurement may lack.
func optional[T any](v *T, format func(T) string) string {
	if v == nil {
		return dash
	}
	return format(*v)
}
