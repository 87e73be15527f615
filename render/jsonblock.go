package render

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/matrixgen/matrixgen/internal/jsonw"
)

// A run page's two big JSON blocks, its cells' details and its matrix
// views, are written here rather than by encoding/json, for the reason
// fragment.go gives: reflection over a thousand maps and slices a page was
// a tenth of a build. The bytes are encoding/json's exactly (its key order,
// number format and escaping, tested), so a page is the same either way.

// appendJSON writes the details as json.Marshal writes them, their cells
// an object from id to detail.
func (d *detailsData) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"labels":`...)
	b = appendJSONStrings(b, d.Labels)
	b = append(b, `,"cells":{`...)
	for i, c := range d.Cells {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, c.ID)
		b = append(b, ':')
		var err error
		if b, err = c.Detail.appendJSON(b); err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.ID, err)
		}
	}
	b = append(b, `},"charts":`...)
	b = append(b, cellChartsJSON()...)
	return append(b, '}'), nil
}

// cellChartsJSON is the charts part of every page's details, marshalled
// once a process.
var cellChartsJSON = sync.OnceValue(func() []byte {
	js, err := json.Marshal(cellChartOptions())
	if err != nil {
		panic("render: cell chart options do not marshal: " + err.Error())
	}
	return js
})

func (c cellDetail) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"heading":`...)
	b = appendJSONString(b, c.Heading)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, c.Status)
	if c.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, c.Reason)
	}
	b = append(b, `,"figures":`...)
	b = appendJSONStrings(b, c.Figures)
	if len(c.PerSecond) > 0 {
		b = append(b, `,"per_second":[`...)
		for i, n := range c.PerSecond {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, ']')
	}
	if len(c.Power) > 0 {
		b = append(b, `,"power":[`...)
		for i, point := range c.Power {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for j, v := range point {
				if j > 0 {
					b = append(b, ',')
				}
				var err error
				if b, err = appendJSONFloatPtr(b, v); err != nil {
					return nil, err
				}
			}
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if len(c.Metrics) > 0 {
		b = append(b, `,"metrics":[`...)
		for i, m := range c.Metrics {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONStrings(b, m[:])
		}
		b = append(b, ']')
	}
	if l := c.Loop; l != nil {
		b = append(b, `,"loop":{"unit":`...)
		b = appendJSONString(b, l.Unit)
		b = append(b, `,"start_offset":`...)
		b = strconv.AppendInt(b, int64(l.StartOffset), 10)
		if l.Excerpt != "" {
			b = append(b, `,"excerpt":`...)
			b = appendJSONString(b, l.Excerpt)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendViewsJSON writes the matrix views as json.Marshal writes them, with
// each view's cells an object from id to figure and class.
func appendViewsJSON(b []byte, views []matrixView) []byte {
	if views == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range views {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, v.Name)
		b = append(b, `,"label":`...)
		b = appendJSONString(b, v.Label)
		b = append(b, `,"legend":`...)
		if v.Legend == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for j, bin := range v.Legend {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"Class":`...)
				b = appendJSONString(b, bin.Class)
				b = append(b, `,"Range":`...)
				b = appendJSONString(b, bin.Range)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, `,"cells":`...)
		b = append(b, '{')
		for j, c := range v.Cells {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, c.ID)
			b = append(b, ':')
			b = appendJSONStrings(b, c.Shown[:])
		}
		b = append(b, '}')
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendJSONStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONString quotes s as encoding/json does, <, > and & escaped so
// nothing in a script block reads as markup.
func appendJSONString(b []byte, s string) []byte { return jsonw.AppendString(b, s, true) }

// appendJSONFloatPtr writes a number as encoding/json does (the shortest
// form that reads back, exponents only for the very small or large), or
// null. Like encoding/json it refuses NaN and infinities.
func appendJSONFloatPtr(b []byte, v *float64) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	f := *v
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
