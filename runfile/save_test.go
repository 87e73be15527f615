package runfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// fullDisk is a temp file on a disk with no room left.
type fullDisk struct{ *os.File }

func (f fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func savedRun() *matrixgen.Run {
	return &matrixgen.Run{Schema: 1, Tool: matrixgen.Tool{Name: "t"}, Engine: matrixgen.Engine{Name: "e"}, Model: matrixgen.Model{Name: "m"}}
}

func TestSaveFailuresKeepThePreviousFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	if err := Save(file, savedRun()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	changed := savedRun()
	changed.Model.Name = "changed"
	defer func(orig func(string, string) (tempFile, error)) { createTemp = orig }(createTemp)
	for _, tt := range []struct {
		name string
		fail func(dir, pattern string) (tempFile, error)
		want string
	}{
		{"disk full", func(dir, pattern string) (tempFile, error) {
			f, err := os.CreateTemp(dir, pattern)
			return fullDisk{f}, err
		}, "no space left on device"},
		{"read-only folder", func(dir, pattern string) (tempFile, error) {
			return nil, &os.PathError{Op: "open", Path: dir, Err: syscall.EROFS}
		}, "read-only file system"},
	} {
		createTemp = tt.fail
		err := Save(file, changed)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "previous file is unchanged") {
			t.Errorf("%s: error %v", tt.name, err)
		}
		if after, _ := os.ReadFile(file); string(after) != string(before) {
			t.Errorf("%s: the previous file changed", tt.name)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".run.json.tmp-*")); len(left) > 0 {
			t.Errorf("%s: left %v behind", tt.name, left)
		}
	}
}
