package runfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLinksOutsideTheRunsFolder: a note linked to /etc/passwd was once
// published. A link that resolves outside the runs folder is refused, and
// says which; a link inside it is fine.
func TestLinksOutsideTheRunsFolder(t *testing.T) {
	dir, runs, sample := runsFolder(t)
	secret := filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("root:x:0:0"), 0o644)
	os.WriteFile(filepath.Join(runs, "a.json"), sample, 0o644)
	os.Symlink(secret, filepath.Join(runs, "a.md"))
	if _, err := Load(filepath.Join(runs, "a.json")); err == nil || !strings.Contains(err.Error(), "outside the runs folder") {
		t.Errorf("a note linked outside: %v", err)
	}
	os.Symlink(filepath.Join(dir, "elsewhere.json"), filepath.Join(runs, "b.json"))
	os.WriteFile(filepath.Join(dir, "elsewhere.json"), sample, 0o644)
	if _, err := Load(filepath.Join(runs, "b.json")); err == nil || !strings.Contains(err.Error(), "outside the runs folder") {
		t.Errorf("a run file linked outside: %v", err)
	}
	os.WriteFile(filepath.Join(runs, "c-notes.txt"), []byte("# fine"), 0o644)
	os.WriteFile(filepath.Join(runs, "c.json"), sample, 0o644)
	os.Symlink("c-notes.txt", filepath.Join(runs, "c.md"))
	if e, err := Load(filepath.Join(runs, "c.json")); err != nil || string(e.Notes) != "# fine" {
		t.Errorf("a note linked inside the folder: %v", err)
	}
}

// TestNotesAreBounded: a note larger than MaxNotesBytes is an error
// (TestNotesMustBeRegular: one that is not a regular file).
func TestNotesAreBounded(t *testing.T) {
	dir := t.TempDir()
	sample, _ := os.ReadFile(sampleRun)
	os.WriteFile(filepath.Join(dir, "a.json"), sample, 0o644)
	os.WriteFile(filepath.Join(dir, "a.md"), make([]byte, MaxNotesBytes+1), 0o644)
	if _, err := Load(filepath.Join(dir, "a.json")); err == nil || !strings.Contains(err.Error(), "a note may be") {
		t.Errorf("a note of %d bytes: %v", MaxNotesBytes+1, err)
	}
}

// TestRunsFolderNameCannotForgeALine: a runs folder that is not there is
// named quoted, so a newline in its name cannot print a line of its own.
func TestRunsFolderNameCannotForgeALine(t *testing.T) {
	_, err := Files("nope\nmatrixgen build: built 99 pages")
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("%q", err)
	}
}

// runsFolder makes a runs folder in a folder of the test's own, and gives
// both and the seed run file's bytes to put in it.
func runsFolder(t *testing.T) (dir, runs string, sample []byte) {
	t.Helper()
	dir = t.TempDir()
	runs = filepath.Join(dir, "runs")
	os.Mkdir(runs, 0o755)
	sample, err := os.ReadFile(sampleRun)
	if err != nil {
		t.Fatal(err)
	}
	return dir, runs, sample
}

// TestFilesInAFolderNamedLikeAPattern: a runs folder whose name holds a
// glob's letters (lab[1], a*b) is listed as named; a glob found no run
// there, and a build replaced a site with an empty one.
func TestFilesInAFolderNamedLikeAPattern(t *testing.T) {
	for _, name := range []string{"lab[1]", "a*b", "q?", "x[", `back\slash`} {
		dir := filepath.Join(t.TempDir(), name, "runs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"b.json", "a.json", ".a.json", "notes.md", "c.JSON"} {
			os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644)
		}
		got, err := Files(dir)
		if want := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}; err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}
