package render

import (
	"cmp"
	"crypto/sha256"
	"path"
	"slices"
	"time"
)

// A build reuses the pages of the runs whose inputs did not change since
// the site it replaces was built (package site keeps the cache). This is
// what the cache holds of a run.

// CachedRun is what the reuse cache keeps of a run: its id, its input and
// its summary.
type CachedRun struct {
	ID, Input string
	Row       CachedRow
}

// pageSums are the SHA-256 of a run's files, in RunFiles' order.
type pageSums [4][sha256.Size]byte

// CachedRow is a run's summary (its line on the index, its columns of
// runs.csv, its files' hashes) as the cache keeps it.
type CachedRow struct {
	Model, GPU, Engine, Quantization, Date, BestSingle, Peak string
	// BestPerWatt is the run's best tok/s per watt of a valid cell, "" for
	// a run without GPU telemetry: as shown, and to sort by.
	BestPerWatt                      string
	EngineName, BestValue, PeakValue string // for filtering and sorting
	Simulated                        bool
	Started                          time.Time
	// CSVPrefix is the run's columns of runs.csv before its measurements,
	// encoded, with the comma after them (sitecsv.go).
	CSVPrefix string
	CSVRows   int32 // its rows of measurements (of runs.csv)
	// Sums are checked before the old site's file is linked into the new one.
	Sums pageSums
	Hid  bool // the build hid a secret in its launch command
}

// indexRow is the summary as a build keeps it, the strings many runs
// share interned.
func (c CachedRow) indexRow(id string) indexRow {
	for _, s := range []*string{&c.Model, &c.GPU, &c.Engine, &c.Quantization, &c.Date, &c.EngineName} {
		*s = interned.load(*s, func() string { return *s })
	}
	return indexRow{ID: id, Href: "runs/" + id + "/index.html", CachedRow: c}
}

// RunFiles are a run's files in its folder, as renderRun makes them.
var RunFiles = []string{"index.html", "run.json", MeasurementsFile, "compare.js"}

// MeasurementsFile is the run's file a build reads back from the site
// (Folder.Measurements) to write runs.csv.
const MeasurementsFile = "measurements.csv"

// sumsOf are the hashes of a run's files, from renderRun.
func sumsOf(files []siteFile) pageSums {
	var sums pageSums
	for _, f := range files {
		if i := slices.Index(RunFiles, path.Base(f.rel)); i >= 0 {
			sums[i] = sha256.Sum256(f.data)
		}
	}
	return sums
}

// writeReuse records, for the next build, each run's inputs and summary.
func (b *Renderer) writeReuse(rows []indexRow, inputs map[string]string) error {
	if b.cache == nil {
		return nil
	}
	// The rows by id, as indices: a copy of each would double them.
	var order []int32
	for i, r := range rows {
		if _, ok := inputs[r.ID]; ok {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(i, j int32) int { return cmp.Compare(rows[i].ID, rows[j].ID) })
	return b.cache.Save(len(order), func(yield func(CachedRun) bool) {
		for _, i := range order {
			r := &rows[i]
			if !yield(CachedRun{ID: r.ID, Input: inputs[r.ID], Row: r.CachedRow}) {
				return
			}
		}
	})
}
