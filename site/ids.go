package site

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/render"
)

// IDClashes returns an error for each run of src whose id differs from an
// earlier one's only in case (A.json and a.json): on a file system that
// ignores case the two are one folder; renaming would break links. Run ids
// are ASCII, so case is the only way two can name one folder.
func IDClashes(src render.Source) []error {
	// The ids and the names to show, without reading a run.
	var ids, names []string
	switch s := src.(type) {
	case Files:
		for _, f := range s {
			ids = append(ids, strings.TrimSuffix(filepath.Base(f), ".json"))
		}
		names = s
	case render.Entries:
		for _, e := range s {
			ids, names = append(ids, e.ID), append(names, cmp.Or(e.File, e.ID))
		}
	}
	first := make(map[string]int, len(ids))
	var errs []error
	for i, id := range ids {
		folded := strings.ToLower(id)
		j, seen := first[folded]
		if !seen {
			first[folded] = i
			continue
		}
		errs = append(errs, fmt.Errorf("%s and %s: their ids differ only in case, and on a file system that ignores case (macOS, Windows, many bucket mounts) their pages would be one folder; rename one",
			term.Name(names[j]), term.Name(names[i])))
	}
	return errs
}
