package render

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/browser"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestComparedFiles: of the compared buckets, only those holding a pair
// are written, assets/compared/buckets.js lists exactly those, and each
// lists its runs' compare pages, which exist. In a browser, served and from
// disk, a run page loads the list and then its own bucket only if listed:
// a run in no pair asks for no bucket and shows nothing; a run in two
// pairs shows both, linked to their pages.
func TestComparedFiles(t *testing.T) {
	// Two runs of one model and GPU (a pair), three of another (two
	// pairs), and one of its own (none).
	groups := map[string][]string{"m": {"alpha-1", "alpha-2"}, "n": {"beta-1", "beta-2", "beta-3"}, "solo": {"lone"}}
	var entries []runfile.Entry
	seed := uint64(0)
	for model, ids := range groups {
		for _, id := range ids {
			r := testrun.Full(seed)
			seed++
			r.Model.Name, r.Hardware.GPU = model, "GPU "+model
			entries = append(entries, runfile.Entry{ID: id, Run: r})
		}
	}
	paired := []string{"alpha-1", "alpha-2", "beta-1", "beta-2", "beta-3"}
	for _, id := range paired {
		if comparedBucket(id) == comparedBucket("lone") {
			t.Fatalf("the lone run shares the bucket of %s: pick other ids", id)
		}
	}
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries(entries), Site{Title: "Compared"}, out); err != nil {
		t.Fatal(err)
	}

	var want []int
	for _, id := range paired {
		want = append(want, comparedBucket(id))
	}
	slices.Sort(want)
	want = slices.Compact(want)
	var got []string
	des, err := os.ReadDir(filepath.Join(out, "assets", "compared"))
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		got = append(got, de.Name())
	}
	wantNames := []string{"buckets.js"}
	for _, b := range want {
		wantNames = append(wantNames, filepath.Base(comparedName(b)))
	}
	slices.Sort(wantNames)
	if !slices.Equal(got, wantNames) {
		t.Errorf("assets/compared holds %q, want the buckets of the paired runs and the list: %q", got, wantNames)
	}
	list := read(t, filepath.Join(out, filepath.FromSlash(comparedListName)))
	var listed []int
	if js, ok := strings.CutPrefix(list, "matrixgenComparedBuckets("); !ok || json.Unmarshal([]byte(strings.TrimSuffix(js, ");\n")), &listed) != nil {
		t.Fatalf("buckets.js reads %q", list)
	}
	if !slices.Equal(listed, want) {
		t.Errorf("buckets.js lists %v, want %v", listed, want)
	}
	// Each paired run's links, as its bucket gives them: the other run and
	// a compare page that exists.
	links := map[string][]string{}
	for _, b := range want {
		js := read(t, filepath.Join(out, filepath.FromSlash(comparedName(b))))
		prefix := "matrixgenCompared(" + strconv.Itoa(b) + ", "
		var runs [][]json.RawMessage
		if !strings.HasPrefix(js, prefix) || json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(js, prefix), ");\n")), &runs) != nil {
			t.Fatalf("bucket %d reads %q", b, js)
		}
		for _, r := range runs {
			var id string
			var others [][2]string
			if json.Unmarshal(r[0], &id) != nil || json.Unmarshal(r[1], &others) != nil {
				t.Fatalf("bucket %d holds %s", b, r)
			}
			for _, o := range others {
				links[id] = append(links[id], o[0])
				if _, err := os.Stat(filepath.Join(out, "compare", o[1], "index.html")); err != nil {
					t.Errorf("%s's link to %s: %v", id, o[0], err)
				}
			}
		}
	}
	for id, others := range map[string][]string{"alpha-1": {"alpha-2"}, "alpha-2": {"alpha-1"}, "beta-1": {"beta-2"},
		"beta-2": {"beta-1", "beta-3"}, "beta-3": {"beta-2"}} {
		slices.Sort(links[id])
		if !slices.Equal(links[id], others) {
			t.Errorf("%s is listed as compared with %q, want %q", id, links[id], others)
		}
	}
	if len(links) != 5 {
		t.Errorf("the buckets list %d runs with pairs, want 5: %v", len(links), links)
	}

	path := browser.PathForTest(t)
	server := httptest.NewServer(http.FileServer(http.Dir(out)))
	defer server.Close()
	b := browser.StartForTest(t, path)
	for _, root := range []string{server.URL, "file://" + out} {
		for _, c := range []struct {
			id    string
			links []string
		}{{"lone", nil}, {"beta-2", []string{"beta-2 vs beta-1", "beta-2 vs beta-3"}}} {
			where := c.id + "'s page at " + root
			if err := b.Navigate(context.Background(), root+"/runs/"+c.id+"/index.html"); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			// Once the list has come, the section shows once its bucket has
			// too, or stays hidden for a run in no pair (at most 10 s, far
			// past the moment it takes).
			var shown []string
			if err := b.Eval(`new Promise(done => { const start = Date.now(); (function wait() {
				const s = document.getElementById("compared"), listed = s.getAttribute("data-listed");
				if (listed === "no" || listed === "yes" && !s.hidden || Date.now() - start > 10000)
					return done(s.hidden ? [] : [...s.querySelectorAll("a")].map(a => a.textContent + " " + a.href));
				setTimeout(wait, 50); })(); })`, &shown); err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, s := range shown {
				text, href, _ := strings.Cut(s, " "+root+"/")
				texts = append(texts, text)
				if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(href))); err != nil || !strings.HasPrefix(href, "compare/") {
					t.Errorf("%s links %s to %s: %v", where, text, href, err)
				}
			}
			slices.Sort(texts)
			if !slices.Equal(texts, c.links) {
				t.Errorf("%s lists %q, want %q", where, texts, c.links)
			}
			var asked []string
			for _, u := range b.Requests() {
				if rel, ok := strings.CutPrefix(u, root+"/assets/compared/"); ok {
					asked = append(asked, rel)
				}
			}
			wantAsked := []string{"buckets.js"}
			if c.links != nil {
				wantAsked = append(wantAsked, filepath.Base(comparedName(comparedBucket(c.id))))
			}
			if !slices.Equal(asked, wantAsked) {
				t.Errorf("%s asked for %q of assets/compared, want %q", where, asked, wantAsked)
			}
			for _, e := range b.Errors() {
				t.Errorf("%s: %s", where, e)
			}
		}
	}
}
