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
	Model, GPU, Engine, Quantization, Date, BestSingle, Peak, BestPerWatt string
	EngineName, BestValue, PeakValue                                      string
	Simulated                                                             bool
	Started                                                               time.Time
	CSVPrefix                                                             string
	CSVRows                                                               int32
	// Sums are checked before the old site's file is linked into the new one.
	Sums pageSums
	Hid  bool // the build hid a secret in its launch command
}

func cacheRow(r indexRow) CachedRow {
	return CachedRow{Model: r.Model, GPU: r.GPU, Engine: r.Engine, Quantization: r.Quantization, Date: r.Date,
		BestSingle: r.BestSingle, Peak: r.Peak, BestPerWatt: r.BestPerWatt, EngineName: r.EngineName,
		BestValue: r.BestValue, PeakValue: r.PeakValue, Simulated: r.Simulated,
		Started: r.started, CSVPrefix: r.csvPrefix, CSVRows: r.csvRows, Sums: r.sums, Hid: r.hid}
}

// indexRow is the cached summary as a build keeps it, its shared strings
// interned as newIndexRow's are.
func (c CachedRow) indexRow(id string) indexRow {
	return indexRow{ID: id, Href: "runs/" + id + "/index.html", Model: intern(c.Model), GPU: intern(c.GPU), Engine: intern(c.Engine),
		Quantization: intern(c.Quantization), Date: intern(c.Date), BestSingle: c.BestSingle, Peak: c.Peak, BestPerWatt: c.BestPerWatt,
		EngineName: intern(c.EngineName), BestValue: c.BestValue, PeakValue: c.PeakValue,
		Simulated: c.Simulated, started: c.Started, csvPrefix: c.CSVPrefix, csvRows: c.CSVRows, sums: c.Sums, hid: c.Hid}
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
			if !yield(CachedRun{ID: r.ID, Input: inputs[r.ID], Row: cacheRow(*r)}) {
				return
			}
		}
	})
}
