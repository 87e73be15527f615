package browser

import (
	"os"
	"os/exec"
	"testing"
)

// PathForTest is the path of a Chromium or Chrome on this machine: without
// one the test is skipped, and saying so, or fails where
// MATRIXGEN_REQUIRE_BROWSER is set (.ci/run installs Chromium and sets it,
// so there no browser test can be skipped).
func PathForTest(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const missing = "no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)"
	if os.Getenv("MATRIXGEN_REQUIRE_BROWSER") != "" {
		t.Fatal(missing)
	}
	t.Skip("SKIPPED, not passed: " + missing)
	return ""
}

// StartForTest starts the Chromium at path with a fresh profile, closed
// when the test ends; Chromium's helpers may still write the profile then,
// so it is removed on a best-effort basis, not by t.TempDir.
func StartForTest(t testing.TB, path string) *Browser {
	t.Helper()
	profile, err := os.MkdirTemp("", "matrixgen-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	b, err := Start(path, profile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}
