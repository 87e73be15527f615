package site

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/sitesize"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
)

// readSitemap reads a site's sitemap: the addresses each file lists, by
// file, following sitemap.xml's index to its parts when it is one.
func readSitemap(t *testing.T, out, base string) map[string][]string {
	t.Helper()
	var doc struct {
		XMLName  xml.Name
		URLs     []string `xml:"url>loc"`
		Sitemaps []string `xml:"sitemap>loc"`
	}
	read := func(name string) {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		doc.URLs, doc.Sitemaps = nil, nil
		if err := xml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	read("sitemap.xml")
	if doc.XMLName.Local == "urlset" {
		return map[string][]string{"sitemap.xml": doc.URLs}
	}
	if doc.XMLName.Local != "sitemapindex" || len(doc.URLs) > 0 {
		t.Fatalf("sitemap.xml is a %s with %d addresses", doc.XMLName.Local, len(doc.URLs))
	}
	files := map[string][]string{}
	for _, loc := range doc.Sitemaps {
		name, ok := strings.CutPrefix(loc, base)
		if !ok {
			t.Fatalf("the sitemap index names %s, not under %s", loc, base)
		}
		read(name)
		files[name] = doc.URLs
	}
	return files
}

// TestSitemapInParts: a site with more pages than a sitemap may list
// (50,000; here 5) gets a sitemap index naming parts, each within the
// limit, that list every page once; adding a run rewrites the newest part
// and, when a part is added, the index — not every part — and a site that
// shrinks back to one file removes its parts.
func TestSitemapInParts(t *testing.T) {
	old := sitesize.SitemapURLs
	sitesize.SitemapURLs = 5
	t.Cleanup(func() { sitesize.SitemapURLs = old })
	const base = "https://example.org/lab/"
	site := render.Site{BaseURL: "https://example.org/lab"}
	runs := t.TempDir()
	var files []string
	add := func(i int) {
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%02d", i), testrun.Full(uint64(i)), ""))
	}
	for i := range 12 {
		add(i)
	}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, site, out)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, runs int) {
		t.Helper()
		want := []string{base, base + "methodology.html"}
		for i := range runs {
			want = append(want, fmt.Sprintf("%sruns/run-%02d/", base, i))
		}
		var got []string
		for name, urls := range readSitemap(t, out, base) {
			if len(urls) > sitesize.SitemapURLs {
				t.Errorf("%s: %s lists %d addresses, over %d", what, name, len(urls), sitesize.SitemapURLs)
			}
			got = append(got, urls...)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the sitemap lists %q, want %q", what, got, want)
		}
	}
	check("12 runs", 12)
	// 2 + 12 addresses in parts of 5, from the oldest: home, methodology
	// and 3 runs, then 5, 4.
	parts := func() []string {
		names, _ := filepath.Glob(filepath.Join(out, "sitemap-*.xml"))
		for i, n := range names {
			names[i] = filepath.Base(n)
		}
		return names
	}
	if got := parts(); !slices.Equal(got, []string{"sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml"}) {
		t.Fatalf("parts %q", got)
	}
	for _, c := range []struct {
		run  int
		want []string
	}{
		{12, []string{"sitemap-3.xml"}},                // the newest part has room
		{13, []string{"sitemap-4.xml", "sitemap.xml"}}, // a new part, named in the index
	} {
		before := fileStates(t, out)
		add(c.run)
		if _, err := live.Update(files); err != nil {
			t.Fatal(err)
		}
		var got []string
		for name := range rewritten(before, fileStates(t, out)) {
			if strings.HasPrefix(name, "sitemap") {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("run-%02d added: rewrote %q of the sitemap, want %q", c.run, got, c.want)
		}
		check(fmt.Sprintf("run-%02d added", c.run), c.run+1)
	}
	liveSameAsAFreshBuild(t, live, runs, out, site)
	// Down to 2 runs: one sitemap.xml again, no parts left behind.
	for _, f := range files[2:] {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	files = files[:2]
	if _, err := live.Update(files); err != nil {
		t.Fatal(err)
	}
	if got := parts(); len(got) > 0 {
		t.Errorf("parts left behind: %q", got)
	}
	check("2 runs", 2)
	liveSameAsAFreshBuild(t, live, runs, out, site)
}

// TestSitemapPartsAfterAFailedWrite: an update whose sitemap write fails
// partway still knows every part the folder holds, so a later update
// removes those it no longer names.
func TestSitemapPartsAfterAFailedWrite(t *testing.T) {
	old := sitesize.SitemapURLs
	sitesize.SitemapURLs = 10
	t.Cleanup(func() { sitesize.SitemapURLs = old })
	site := render.Site{BaseURL: "https://example.org/lab"}
	runs := t.TempDir()
	var files []string
	for i := range 19 {
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%02d", i), testrun.Full(uint64(i)), ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, site, out)
	if err != nil {
		t.Fatal(err)
	}
	// A folder where the newest part goes: its write fails.
	block := filepath.Join(out, "sitemap-3.xml")
	os.Remove(block)
	if err := os.MkdirAll(filepath.Join(block, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	files = append(files, writeRunFile(t, runs, "run-19", testrun.Full(19), ""))
	if _, err := live.Update(files); err == nil {
		t.Fatal("an update whose sitemap part is a folder did not fail")
	}
	if err := os.RemoveAll(block); err != nil {
		t.Fatal(err)
	}
	for _, f := range files[5:] {
		os.Remove(f)
	}
	files = files[:5]
	if _, err := live.Update(files); err != nil {
		t.Fatal(err)
	}
	if parts, _ := filepath.Glob(filepath.Join(out, "sitemap-*.xml")); len(parts) > 0 {
		t.Errorf("parts left behind after a failed write: %q", parts)
	}
	liveSameAsAFreshBuild(t, live, runs, out, site)
}
