package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"hash/maphash"
	"maps"
	"strings"

	"github.com/matrixgen/matrixgen/internal/sitesize"
)

// sitemapFile is one file of the sitemap: its name and its text.
type sitemapFile struct {
	rel  string
	data []byte
}

// sitemapFiles lists every page for search engines when the site knows
// where it will be published (none when it does not): sitemap.xml
// itself, or, past sitesize.SitemapURLs addresses, a sitemap index there and parts
// sitemap-1.xml … numbered from the oldest runs, so a run added rewrites
// the newest part and not every one. rows are newest first.
func (b *Renderer) sitemapFiles(rows []indexRow) []sitemapFile {
	if b.site.BaseURL == "" {
		return nil
	}
	base := strings.TrimSuffix(b.site.BaseURL, "/") + "/"
	pages := []string{"", "methodology.html"}
	if len(pages)+len(rows) <= sitesize.SitemapURLs {
		for _, r := range rows {
			pages = append(pages, "runs/"+r.ID+"/")
		}
		return []sitemapFile{{"sitemap.xml", urlSet(base, pages)}}
	}
	var parts []sitemapFile
	for end := len(rows); end > 0 || len(parts) == 0; {
		page := pages
		room := sitesize.SitemapURLs - len(page)
		start := max(end-room, 0)
		for i := end - 1; i >= start; i-- {
			page = append(page, "runs/"+rows[i].ID+"/")
		}
		parts = append(parts, sitemapFile{fmt.Sprintf("sitemap-%d.xml", len(parts)+1), urlSet(base, page)})
		pages, end = nil, start
	}
	var index bytes.Buffer
	index.WriteString(xml.Header + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, p := range parts {
		index.WriteString("<sitemap><loc>")
		xml.EscapeText(&index, []byte(base+p.rel))
		index.WriteString("</loc></sitemap>\n")
	}
	index.WriteString("</sitemapindex>\n")
	return append(parts, sitemapFile{"sitemap.xml", index.Bytes()})
}

// urlSet is a sitemap listing the pages, addresses relative to base.
func urlSet(base string, pages []string) []byte {
	var buf bytes.Buffer
	buf.WriteString(xml.Header + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, loc := range pages {
		buf.WriteString("<url><loc>")
		xml.EscapeText(&buf, []byte(base+loc))
		buf.WriteString("</loc></url>\n")
	}
	buf.WriteString("</urlset>\n")
	return buf.Bytes()
}

// writeSitemap writes the sitemap's files that changed since it was last
// written (every one, the first time) and removes the parts it no longer
// has.
func (b *Renderer) writeSitemap(out Folder, rows []indexRow) error {
	files := b.sitemapFiles(rows)
	// What the folder holds, kept up to date file by file, so that an
	// update that fails partway still knows every part it has to remove
	// or write again: a file whose write failed is known by a print no
	// text has.
	held := maps.Clone(b.sitemapPrints)
	if held == nil {
		held = map[string]uint64{}
	}
	defer func() { b.sitemapPrints = held }()
	named := make(map[string]bool, len(files))
	for _, f := range files {
		named[f.rel] = true
		print := maphash.Bytes(sitemapSeed, f.data)
		if old, ok := held[f.rel]; ok && old == print {
			continue
		}
		if err := out.WriteFile(f.rel, f.data); err != nil {
			held[f.rel] = unwritten
			return err
		}
		held[f.rel] = print
	}
	for rel := range held {
		if named[rel] {
			continue
		}
		if err := out.Remove(rel); err != nil {
			return err
		}
		delete(held, rel)
	}
	return nil
}

// unwritten is the print of a sitemap file whose write failed: no text's,
// so the next update writes it (or removes it) whatever it then holds.
// (A text could hash to it; one in 2^64.)
const unwritten = 0

var sitemapSeed = maphash.MakeSeed()
