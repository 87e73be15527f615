package render

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// TestCopyAssetsLeavesTheGoSourceOut: static files read from a checkout
// (serve) sit beside the Go file that embeds them; a site gets the files,
// in their folders, and not the source.
func TestCopyAssetsLeavesTheGoSourceOut(t *testing.T) {
	dir := t.TempDir()
	static := fstest.MapFS{
		"static.go":              {Data: []byte("package static")},
		"matrixgen.css":          {Data: []byte("body{}")},
		"vendor/echarts/LICENSE": {Data: []byte("licence")},
	}
	if err := copyAssets(static, dirFolder(dir)); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"assets/matrixgen.css": true, "assets/vendor/echarts/LICENSE": true, "assets/static.go": false} {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if got := err == nil; got != want {
			t.Errorf("%s in the site: %v, want %v", rel, got, want)
		}
	}
}
