package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/sim"
)

// TestExampleProfileIsTheDefault keeps examples/sim-profile.toml complete
// and true: it must load and equal the sim's defaults.
func TestExampleProfileIsTheDefault(t *testing.T) {
	name := filepath.Join("..", "examples", "sim-profile.toml")
	p, err := LoadSimProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	if p != sim.DefaultProfile() {
		t.Errorf("the example profile differs from the defaults:\n%+v\n%+v", p, sim.DefaultProfile())
	}
	// Read over nothing, the example alone must make the defaults: it
	// spells out every one (an empty example would pass the check above).
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var file simProfile
	if err := decodeStrict(name, data, &file); err != nil {
		t.Fatal(err)
	}
	if alone := file.asProfile(); alone != sim.DefaultProfile() {
		t.Errorf("the example leaves defaults unwritten:\n%+v\n%+v", alone, sim.DefaultProfile())
	}
	// And back: every field of the sim's profile has its place in the file.
	if profileFile(sim.DefaultProfile()).asProfile() != sim.DefaultProfile() {
		t.Error("a profile does not survive the way to its file form and back")
	}
}

func TestLoadSimProfileErrors(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"[decode]\nbase_ms = 0\n", "p.toml:2: decode: base_ms must be positive"},
		{"model = \"\"\n", "p.toml:1: model: required"},
		{"[kv]\nblock_size = 16\ncapacity_tokens = 10\n", "p.toml:3: kv.capacity_tokens: must hold"},
		{"[kv]\nblock_size = 16\nslots = 4\n", `p.toml:3: unknown key "kv.slots"`},
		{"model = 3\n", `p.toml:1: key "model"`},
		{"[faults]\nhttp_status = 404\n", "http_status"},
	} {
		name := filepath.Join(t.TempDir(), "p.toml")
		os.WriteFile(name, []byte(tt.doc), 0o644)
		_, err := LoadSimProfile(name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to contain %q", tt.doc, err, tt.want)
		}
	}
}
