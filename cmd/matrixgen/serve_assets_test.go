package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLiveAssetsOnlyInMatrixgensCheckout: serve reads templates/ and
// static/ from disk only in matrixgen's own checkout; a lab's folder that
// happens to hold folders of those names (a Hugo site's, another Go
// module's) builds with the embedded ones.
func TestLiveAssetsOnlyInMatrixgensCheckout(t *testing.T) {
	for _, tt := range []struct {
		name, gomod string
		dirs        []string
		live        bool
	}{
		{"checkout", "module github.com/matrixgen/matrixgen\n\ngo 1.26\n", []string{"templates", "static"}, true},
		{"checkout, CRLF", "module github.com/matrixgen/matrixgen\r\n", []string{"templates", "static"}, true},
		{"another module", "module github.com/matrixgen/matrixgen-fork\n", []string{"templates", "static"}, false},
		{"no go.mod", "", []string{"templates", "static"}, false},
		{"no static", "module github.com/matrixgen/matrixgen\n", []string{"templates"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			if tt.gomod != "" {
				if err := os.WriteFile("go.mod", []byte(tt.gomod), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range tt.dirs {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if got := liveAssets() != nil; got != tt.live {
				t.Errorf("live assets: %v, want %v", got, tt.live)
			}
		})
	}
}
