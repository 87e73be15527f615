package render

import (
	"bytes"
	"cmp"
	"math"
	"strconv"
	"strings"
)

// dash stands for "not applicable" in every table, as on published matrices.
const dash = "—"

// tokS formats a throughput as published matrices do: "4,601.0" below
// 10,000, then thousands ("31.9K", "33K"; 1,000, unlike a context's 1,024).
func tokS(v float64) string {
	if r := math.Round(v*10) / 10; math.Abs(r) < 10000 {
		return decimal1(r)
	}
	var buf [32]byte
	k := strconv.AppendFloat(buf[:0], math.Round(v/100)/10, 'f', 1, 64)
	k = bytes.TrimSuffix(k, []byte(".0"))
	return grouped(k, "K")
}

// plain is v in the fewest digits that read back as v, written as
// JavaScript and JSON write numbers: "0.25", "412", and "5e-7" or
// "1e+21" outside 1e-6 up to 1e21, where fixed notation runs to hundreds
// of digits. Data a reader's tools take in (CSV, a VRAM figure) use it.
func plain(v float64) string {
	if a := math.Abs(v); a == 0 || a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Replace(strconv.FormatFloat(v, 'g', -1, 64), "e-0", "e-", 1)
}

// share is a share as a percentage figure without its sign: "1.8".
func share(v float64) string { return percentFigure(100 * v) }

// percentFigure is a percentage without its sign, "1.8"; past a million
// percent, where grouped digits run across the page, three significant
// digits ("4.46e+304"), and "∞" past a float's range.
func percentFigure(p float64) string {
	switch p = math.Abs(p); {
	case math.IsInf(p, 0):
		return "∞"
	case p >= 1e6:
		return strconv.FormatFloat(p, 'g', 3, 64)
	default:
		return decimal1(p)
	}
}

// decimal1 formats v with one decimal and thousands separators: "1,011.5".
func decimal1(v float64) string {
	var buf [32]byte
	return grouped(strconv.AppendFloat(buf[:0], v, 'f', 1, 64), "")
}

// count formats a whole number with thousands separators: "13,370".
func count(n int) string {
	if n > -1000 && n < 1000 {
		return strconv.Itoa(n)
	}
	var buf [24]byte
	return grouped(strconv.AppendInt(buf[:0], int64(n), 10), "")
}

// millis formats a latency in milliseconds: whole milliseconds from 100 ms
// up ("1,778 ms"), one decimal below ("2.2 ms"), where a decimal matters.
func millis(ms float64) string {
	var buf [32]byte
	if math.Round(ms*10)/10 >= 100 {
		return grouped(strconv.AppendFloat(buf[:0], math.Round(ms), 'f', 0, 64), " ms")
	}
	return string(append(strconv.AppendFloat(buf[:0], ms, 'f', 1, 64), " ms"...))
}

// secs formats a measured duration with one decimal: "30.0 s".
func secs(s float64) string {
	var buf [32]byte
	return grouped(strconv.AppendFloat(buf[:0], s, 'f', 1, 64), " s")
}

// planSeconds formats a planned duration, whole where it is whole: "30 s".
func planSeconds(s float64) string {
	if s == math.Trunc(s) {
		return count(int(s)) + " s"
	}
	return secs(s)
}

// grouped is a formatted number with commas between groups of three digits
// of its integer part, and then suffix, in one allocation.
func grouped(num []byte, suffix string) string {
	digits := num
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] < '0' || digits[0] > '9' {
		return string(num) + suffix // +Inf, NaN: no digits to group ("+,Inf")
	}
	whole := len(digits)
	if i := bytes.IndexByte(digits, '.'); i >= 0 {
		whole = i
	}
	var b strings.Builder
	b.Grow(len(num) + whole/3 + len(suffix))
	b.Write(num[:len(num)-len(digits)])
	for i := range whole {
		if i > 0 && (whole-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	b.Write(digits[whole:])
	b.WriteString(suffix)
	return b.String()
}

// optional formats a value that a measurement may lack, a dash where it
// does.
func optional[T any](v *T, format func(T) string) string { return cmp.Or(ifSet(v, format), dash) }

// ifSet formats a value that may be missing, "" where it is: a detail or
// a CSV field shows nothing, where a table shows a dash (optional).
func ifSet[T any](v *T, format func(T) string) string {
	if v == nil {
		return ""
	}
	return format(*v)
}

// ifPositive formats v, or is "" where it is not above zero.
func ifPositive[T int | float64](v T, format func(T) string) string {
	if v <= 0 {
		return ""
	}
	return format(v)
}

// mapped is f of each element of list, in a list of the same length.
func mapped[T, U any](list []T, f func(T) U) []U {
	out := make([]U, len(list))
	for i, v := range list {
		out[i] = f(v)
	}
	return out
}

// perWattText formats tok/s per watt with two decimals: "1.27".
func perWattText(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
