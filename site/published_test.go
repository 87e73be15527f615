package site

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestServerAddressIsNotPublished: a run's probe.base_url (an address on a
// lab's network, 10.x with its port) was published in the site's copy of
// run.json. The site leaves it out unless the site publishes addresses;
// the run file in the runs folder keeps it (a resume needs it), and a run
// without one is published byte for byte.
func TestServerAddressIsNotPublished(t *testing.T) {
	addresses := []string{"http://10.1.2.3:8000", "https://gpu-box-17.lab.internal:30000/v1", "http://[fd00::1]:8080", "http://192.168.0.5"}
	runs := t.TempDir()
	var files []string
	for i, addr := range addresses {
		r := testrun.Full(uint64(i))
		r.Probe = &matrixgen.Probe{Engine: "vllm", Model: "m", BaseURL: addr}
		files = append(files, writeRunFile(t, runs, "run-"+string(rune('a'+i)), r, ""))
	}
	plain := testrun.Full(9)
	files = append(files, writeRunFile(t, runs, "plain", plain, ""))
	kept := map[string][]byte{}
	for _, f := range files {
		kept[f], _ = os.ReadFile(f)
	}
	hidden := filepath.Join(t.TempDir(), "public")
	if _, err := Build(Files(files), render.Site{}, hidden); err != nil {
		t.Fatal(err)
	}
	everything := strings.Join(slices.Collect(maps.Values(siteFiles(t, hidden))), "\n")
	for _, addr := range addresses {
		host := strings.TrimPrefix(strings.TrimPrefix(addr, "http://"), "https://")
		if strings.Contains(everything, host) {
			t.Errorf("the site publishes %s", host)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(hidden, "runs", "plain", "run.json")); string(got) != string(kept[files[len(files)-1]]) {
		t.Error("a run without an address is not published byte for byte")
	}
	e, err := runfile.Load(filepath.Join(hidden, "runs", "run-a", "run.json"))
	if err != nil || e.Run.Probe == nil || e.Run.Probe.Engine != "vllm" || e.Run.Probe.BaseURL != "" {
		t.Errorf("the published run file: %v %+v", err, e.Run)
	}
	for _, f := range files {
		if got, _ := os.ReadFile(f); string(got) != string(kept[f]) {
			t.Errorf("%s changed", f)
		}
	}

	shown := filepath.Join(t.TempDir(), "public")
	if _, err := Build(Files(files), render.Site{PublishServerAddress: true}, shown); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(shown, "runs", "run-a", "run.json")); string(got) != string(kept[files[0]]) {
		t.Error("a site that publishes addresses does not publish the run file as written")
	}

	live, _, err := NewLive(context.Background(), files[:1], render.Site{}, filepath.Join(t.TempDir(), "live"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Update(files); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(slices.Collect(maps.Values(siteFiles(t, live.out))), "\n"), "10.1.2.3") {
		t.Error("a live site publishes the address")
	}
}
