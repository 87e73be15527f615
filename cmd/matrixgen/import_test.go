package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/runfile"
)

func TestImportThenBuild(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	os.MkdirAll(runs, 0o755)
	td := filepath.Join("..", "..", "importer", "testdata")
	code, stdout, stderr := matrixgenCmd(t, "import", "llm-inference-bench", filepath.Join(td, "benchmark_results.json"), "-o", runs)
	if code != 0 || !strings.Contains(stdout, "imported 2 prefill rows and 4 decode cells") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = matrixgenCmd(t, "import", "vllm-bench-serve", filepath.Join(td, "vllm-c1.json"), filepath.Join(td, "vllm-c8.json"), "-o", runs, "-id", "vllm-points")
	if code != 0 || !strings.Contains(stdout, "into "+filepath.Join(runs, "vllm-points.json")) {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	names, err := runfile.Files(runs)
	if err != nil || len(names) != 2 {
		t.Fatalf("%d runs, %v", len(names), err)
	}
	for _, name := range names {
		e, err := runfile.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Notes) == 0 {
			t.Errorf("%s has no notes saying where it came from", e.ID)
		}
	}
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	if code, _, stderr := matrixgenCmd(t, "import", "vllm-bench-serve", filepath.Join(td, "vllm-c1.json"), "-o", runs, "-id", "vllm-points"); code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("overwriting an import: exit %d %s", code, stderr)
	}
	// An id no folder can have on Windows (a device's name) is refused.
	if code, _, stderr := matrixgenCmd(t, "import", "vllm-bench-serve", filepath.Join(td, "vllm-c1.json"), "-o", runs, "-id", "aux.json"); code != 1 || !strings.Contains(stderr, "not a name Windows keeps for a device") {
		t.Errorf("a Windows device's name: exit %d %s", code, stderr)
	}
	if code, _, stderr := matrixgenCmd(t, "import", "guidellm", "x.json"); code != 2 || !strings.Contains(stderr, "unknown format") {
		t.Errorf("unknown format: exit %d %s", code, stderr)
	}
}

// TestImportReadsOnlyFiles: `import … /dev/zero` once read 2.8 GB in ten
// seconds. Devices, FIFOs and the like are refused before a byte is read,
// and the notes name the input by its base name, not the local path.
func TestImportReadsOnlyFiles(t *testing.T) {
	for _, name := range []string{"/dev/zero", "/dev/stdin"} {
		code, _, stderr := matrixgenCmd(t, "import", "llm-inference-bench", name)
		if code == 0 || !strings.Contains(stderr, "not a regular file") {
			t.Errorf("import %s: exit %d, %q", name, code, stderr)
		}
	}
}

// TestImportRefusesUnknownFlags: flags after the files are read too, and a
// misspelt one is an error, not silently dropped.
func TestImportRefusesUnknownFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ args, want string }{
		{"-idd x", "flag provided but not defined: -idd"},
		{"-id", "flag needs an argument: -id"},
		{"--engine=", ""}, // an empty value is a value: the import goes on to the file
	} {
		args := append([]string{"import", "vllm-bench-serve", filepath.Join(dir, "missing.json"), "-o", dir}, strings.Fields(tt.args)...)
		code, _, stderr := matrixgenCmd(t, args...)
		if code == 0 {
			t.Errorf("%q: exit 0", tt.args)
		}
		if tt.want != "" && !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: %s", tt.args, stderr)
		}
		if tt.want == "" && strings.Contains(stderr, "flag") {
			t.Errorf("%q: refused as a flag: %s", tt.args, stderr)
		}
	}
}
