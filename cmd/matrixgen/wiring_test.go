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

// TestRunSettingsErrorsArePlaced: the runner checks the ranges of
// [server], [sweep] and [describe] (Settings.Check, the one place), and
// each problem, all of them, is placed at its key's line in the file.
func TestRunSettingsErrorsArePlaced(t *testing.T) {
	tests := []struct {
		doc  string
		want []string
	}{
		{"[sweep]\n\nconcurrency = [1, -1]\n", []string{"m.toml:3: sweep.concurrency: want levels from 1 to 100000, got -1"}},
		{"[sweep]\ncontexts = [\"8K\", \"lots\"]\n", []string{`m.toml:2: sweep.contexts: context "lots"`}},
		{"[sweep]\ncontexts = [\"8K\", \"max\"]\nprefill_contexts = [\"x\"]\n", []string{"m.toml:3: sweep.prefill_contexts"}},
		{"[sweep]\ncache_mode = \"mixed\"\n", []string{"m.toml:2: sweep.cache_mode"}},
		{"[sweep]\nrepeats = 101\n", []string{"m.toml:2: sweep.repeats"}},
		{"[sweep]\nmax_output = -1\n", []string{"m.toml:2: sweep.max_output"}},
		{"[sweep]\nloop_retries = -1\n", []string{"m.toml:2: sweep.loop_retries"}},
		{"[server]\nbase_url = \"localhost:8000\"\n", []string{"m.toml:2: server.base_url"}},
		{"[server]\nmetrics_url = \"ftp://x/m\"\n", []string{"m.toml:2: server.metrics_url"}},
		{"[describe]\ngpu_count = -2\n", []string{"m.toml:1: describe: vram_gb and gpu_count"}},
		// Every problem is reported, each at its own line.
		{"[server]\nbase_url = \"x\"\n[sweep]\nconcurrency = [0]\ncache_mode = \"y\"\nkv_cache_tokens = -5\n",
			[]string{"m.toml:2: server.base_url", "m.toml:4: sweep.concurrency", "m.toml:5: sweep.cache_mode", "m.toml:6: sweep.kv_cache_tokens"}},
	}
	for _, tt := range tests {
		c, err := config.Parse("m.toml", []byte(tt.doc))
		if err != nil {
			t.Fatalf("%q: %v", tt.doc, err)
		}
		err = runSettings(c).Check()
		if err == nil {
			t.Errorf("%q: accepted", tt.doc)
			continue
		}
		err = placeSettings(err, c, func(string) string { return "" }, "")
		for _, want := range tt.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q: error %v\nwant it to contain %q", tt.doc, err, want)
			}
		}
		if got := strings.Count(err.Error(), "\n") + 1; got != len(tt.want) {
			t.Errorf("%q: %d errors, want %d:\n%v", tt.doc, got, len(tt.want), err)
		}
	}
	// A -contexts flag is named as the place of a bad context.
	c, _ := config.Parse("m.toml", []byte("[sweep]\ncontexts = [\"lots\"]\n"))
	contextsFlag := func(key string) string { return map[string]string{"sweep.contexts": "-contexts"}[key] }
	if err := placeSettings(runSettings(c).Check(), c, contextsFlag, ""); err == nil || !strings.HasPrefix(err.Error(), "-contexts: sweep.contexts") {
		t.Errorf("with -contexts: %v", err)
	}
	// A resumed run's sweep is named as its place.
	if err := placeSettings(runSettings(c).Check(), c, func(string) string { return "" }, "r.json"); err == nil || !strings.HasPrefix(err.Error(), "r.json, its sweep: sweep.contexts") {
		t.Errorf("resumed: %v", err)
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
