package testrun

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runfile"
)

// WriteFile writes r as <id>.json in dir, any notes as <id>.md, and gives
// the run file's name, its time set by Touch, so a file rewritten within
// the file system's tick still shows as changed.
func WriteFile(t testing.TB, dir, id string, r *matrixgen.Run, notes string) string {
	t.Helper()
	data, err := runfile.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, id+".json")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if notes != "" {
		if err := os.WriteFile(filepath.Join(dir, id+".md"), []byte(notes), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Touch(t, name)
	return name
}

// touched is how many times Touch was called.
var touched atomic.Int64

// Touch sets the file's time a second after the last one given.
func Touch(t testing.TB, name string) {
	t.Helper()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(touched.Add(1)) * time.Second)
	if err := os.Chtimes(name, at, at); err != nil {
		t.Fatal(err)
	}
}

// Months are n full runs over three months, the last without a date,
// with a model's name and a reason that a CSV must quote.
func Months(n int) []runfile.Entry {
	var entries []runfile.Entry
	for i := range n {
		r := Full(uint64(i))
		r.Model.Name = fmt.Sprintf("model, \"%d\"", i%2) // a field to quote
		r.StartedAt = time.Date(2026, time.Month(9+i%3), 1+i, 12, 0, 0, 0, time.UTC)
		if i == n-1 {
			r.StartedAt = time.Time{}
		}
		r.Decode[0].Reason = "a reason\nover two lines, \"quoted\""
		entries = append(entries, runfile.Entry{ID: fmt.Sprintf("run-%d", i), Run: r})
	}
	return entries
}
