package render

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/sitesize"
	"github.com/matrixgen/matrixgen/internal/term"
)

// runs.csv is every measurement of every run, in the index's order:
// gigabytes at a hundred thousand runs, so it is streamed. A run's rows are
// its measurements.csv's, read back from the new site, each after the run's
// own columns (siteCSVPrefix, kept in its summary): what encoding/csv
// writes for the whole table, as it encodes each field on its own.

// csvPart is one file runs.csv is split into when it is too long for a
// spreadsheet: its name, its runs' month ("2026-12", or "undated") and its
// rows.
type csvPart struct {
	Name, Month string
	Rows        int
}

// siteCSVPrefixFields are a run's columns of runs.csv before its
// measurements.
func siteCSVPrefixFields(id string, r *matrixgen.Run) []string {
	started := ""
	if !r.StartedAt.IsZero() {
		started = r.StartedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	return []string{id, csvSafe(r.Model.Name), csvSafe(r.Hardware.GPU), csvSafe(r.Engine.Name), csvSafe(r.Engine.Version), csvSafe(r.Engine.Quantization), started,
		strconv.FormatBool(r.Simulated), strings.Join(r.Hardware.Given, " ")}
}

// siteCSVPrefix is a run's columns of runs.csv before its measurements,
// encoded as encoding/csv encodes them, with the comma after them.
func siteCSVPrefix(id string, r *matrixgen.Run) string {
	line := csvBytes(nil, [][]string{siteCSVPrefixFields(id, r)})
	return string(bytes.TrimSuffix(line, []byte("\n"))) + ","
}

// monthOf is the month a run started, as its runs.csv part names it.
func monthOf(r indexRow) string {
	if r.Started.IsZero() {
		return "undated"
	}
	return r.Started.UTC().Format("2006-01")
}

// siteCSVParts are the files runs.csv is split into, newest month first,
// or none when runs.csv fits a spreadsheet; rows are in the index's order.
func siteCSVParts(rows []indexRow) []csvPart {
	total := 1 // the header
	for _, r := range rows {
		total += int(r.CSVRows)
	}
	if total <= sitesize.SpreadsheetRows {
		return nil
	}
	var parts []csvPart
	for _, r := range rows {
		m := monthOf(r)
		if len(parts) == 0 || parts[len(parts)-1].Month != m {
			parts = append(parts, csvPart{Name: "runs-" + m + ".csv", Month: m})
		}
		parts[len(parts)-1].Rows += int(r.CSVRows)
	}
	return parts
}

// writeSiteCSV writes runs.csv, and its parts by month when it is too long
// for a spreadsheet, from rows in the index's order.
func (b *Renderer) writeSiteCSV(out Folder, rows []indexRow) (err error) {
	parts := siteCSVParts(rows)
	all, err := createStream(out, "runs.csv")
	if err != nil {
		return err
	}
	var part *stream
	defer func() {
		for _, s := range []*stream{all, part} {
			if s == nil {
				continue
			}
			if err == nil {
				err = s.finish()
			} else {
				s.s.Abort()
			}
		}
	}()
	var buf []byte
	w := io.Writer(all) // and the part, once there is one
	next := 0           // the next part to open
	for _, r := range rows {
		if next < len(parts) && monthOf(r) == parts[next].Month {
			if part != nil {
				if err := part.finish(); err != nil {
					part = nil
					return err
				}
			}
			if part, err = createStream(out, parts[next].Name); err != nil {
				return err
			}
			w = io.MultiWriter(all, part)
			next++
		}
		if buf, err = copyRunCSV(w, out, r, buf); err != nil {
			return err
		}
	}
	return nil
}

// SiteCSV writes to w the site's runs.csv, or one of its parts by month
// ("runs-2026-12.csv"), as a build would, from the runs' measurements.csv
// in out; ok is false for a name that is neither. A run changed while it
// is written makes an error: what was written is to be thrown away.
func (b *Renderer) SiteCSV(w io.Writer, out Folder, name string) (ok bool, err error) {
	b.mu.RLock()
	rows := b.rows
	b.mu.RUnlock()
	month := ""
	if name != "runs.csv" {
		parts := siteCSVParts(rows)
		i := slices.IndexFunc(parts, func(p csvPart) bool { return p.Name == name })
		if i < 0 {
			return false, nil
		}
		month = parts[i].Month
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(csvBytes(siteCSVHeader, nil))
	var buf []byte
	for _, r := range rows {
		if month != "" && monthOf(r) != month {
			continue
		}
		if buf, err = copyRunCSV(bw, out, r, buf); err != nil {
			return true, err
		}
	}
	return true, bw.Flush()
}

// copyRunCSV writes a run's rows of runs.csv to w: its measurements.csv in
// out, each row after its prefix. buf is reused from one run to the next.
func copyRunCSV(w io.Writer, out Folder, r indexRow, buf []byte) ([]byte, error) {
	buf, name, err := out.Measurements(r.ID, buf)
	if err != nil {
		return buf, fmt.Errorf("runs.csv: %w", err)
	}
	records := csvRecords(buf)
	if len(records) == 0 {
		return buf, fmt.Errorf("runs.csv: %s has no header", term.Name(name))
	}
	if len(records)-1 != int(r.CSVRows) {
		return buf, fmt.Errorf("runs.csv: %s holds %d rows, its run %d (it changed while the site was written)", term.Name(name), len(records)-1, r.CSVRows)
	}
	for _, rec := range records[1:] {
		io.WriteString(w, r.CSVPrefix)
		w.Write(rec)
	}
	return buf, nil
}

// csvRecords cuts CSV as encoding/csv writes it into its records, each
// with its line end: a line end outside quotes (quotes inside a quoted
// field are doubled, so they pair up).
func csvRecords(data []byte) [][]byte {
	var out [][]byte
	start, quoted := 0, false
	for i, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\n' && !quoted:
			out = append(out, data[start:i+1])
			start = i + 1
		}
	}
	if start < len(data) {
		out = append(out, data[start:])
	}
	return out
}

// stream is a file of the site too large to hold, written through a
// buffer.
type stream struct {
	*bufio.Writer
	s Stream
}

// createStream starts the file rel of the site in out, a part of runs.csv
// or the whole, with the header.
func createStream(out Folder, rel string) (*stream, error) {
	s, err := out.Create(rel)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(s, 256<<10)
	w.Write(csvBytes(siteCSVHeader, nil))
	return &stream{Writer: w, s: s}, nil
}

// finish writes out what is buffered and puts the file in place.
func (s *stream) finish() error {
	if err := s.Flush(); err != nil {
		s.s.Abort()
		return err
	}
	return s.s.Close()
}
