package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/sim"
)

// TestExampleProfileIsTheDefault keeps examples/sim-profile.toml complete
// and true: it must load and equal the sim's defaults.
func TestExampleProfileIsTheDefault(t *testing.T) {
	name := filepath.Join("..", "..", "examples", "sim-profile.toml")
	p, err := loadSimProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	if p != sim.DefaultProfile() {
		t.Errorf("the example profile differs from the defaults:\n%+v\n%+v", p, sim.DefaultProfile())
	}
	// Read over nothing, the example alone must make the defaults: it
	// spells out every one (an empty example would pass the check above).
	var alone sim.Profile
	if err := config.LoadFile(name, &alone, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if alone != sim.DefaultProfile() {
		t.Errorf("the example leaves defaults unwritten:\n%+v\n%+v", alone, sim.DefaultProfile())
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
		_, err := loadSimProfile(name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to contain %q", tt.doc, err, tt.want)
		}
	}
}

// TestRunSettingsWireEveryKey: every key of [server], [sweep] and
// [describe], set, reaches the runner's settings: a key added to the
// config and not wired fails here.
func TestRunSettingsWireEveryKey(t *testing.T) {
	var c config.Config
	for _, section := range []any{&c.Server, &c.Sweep, &c.Describe} {
		fillEveryField(t, reflect.ValueOf(section).Elem())
	}
	s := runSettings(c)
	for _, section := range []reflect.Value{reflect.ValueOf(s.Server), reflect.ValueOf(s.Sweep), reflect.ValueOf(s.Describe)} {
		for i := range section.NumField() {
			if section.Field(i).IsZero() {
				t.Errorf("%s.%s is not wired from the config", section.Type().Name(), section.Type().Field(i).Name)
			}
		}
	}
	if len(reflect.VisibleFields(reflect.TypeOf(s.Sweep))) != len(reflect.VisibleFields(reflect.TypeOf(c.Sweep))) {
		t.Error("the runner's sweep and the config's differ in their fields")
	}
}

// fillEveryField sets each field of v to a value other than its zero.
func fillEveryField(t *testing.T, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString("x")
		case int:
			f.SetInt(3)
		case float64:
			f.SetFloat(3)
		case *float64:
			f.Set(reflect.ValueOf(new(3.0)))
		case *int:
			f.Set(reflect.ValueOf(new(3)))
		case *bool:
			f.Set(reflect.ValueOf(new(true)))
		case []string:
			f.Set(reflect.ValueOf([]string{"8K"}))
		case []int:
			f.Set(reflect.ValueOf([]int{3}))
		case map[string]any:
			f.Set(reflect.ValueOf(map[string]any{"x": 1}))
		case config.Duration:
			f.Set(reflect.ValueOf(config.Duration{Duration: time.Second}))
		default:
			t.Fatalf("%s.%s: a %s, which this test cannot fill", v.Type().Name(), v.Type().Field(i).Name, f.Type())
		}
	}
}
