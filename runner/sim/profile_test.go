package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleProfileIsTheDefault keeps examples/sim-profile.toml complete
// and true: it must load and equal DefaultProfile.
func TestExampleProfileIsTheDefault(t *testing.T) {
	p, err := LoadProfile(filepath.Join("..", "..", "examples", "sim-profile.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if p != DefaultProfile() {
		t.Errorf("the example profile differs from the defaults:\n%+v\n%+v", p, DefaultProfile())
	}
}

func TestLoadProfileErrors(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"[decode]\nbase_ms = 0\n", "base_ms must be positive"},
		{"[kv]\nslots = 4\n", `unknown key "kv.slots"`},
		{"model = 3\n", "model"},
		{"[faults]\nhttp_status = 404\n", "http_status"},
	} {
		name := filepath.Join(t.TempDir(), "p.toml")
		os.WriteFile(name, []byte(tt.doc), 0o644)
		_, err := LoadProfile(name)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "p.toml") {
			t.Errorf("%q: error %v, want it to name the file and contain %q", tt.doc, err, tt.want)
		}
	}
}
