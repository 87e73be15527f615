package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/matrixgen/matrixgen/internal/sitesize"
)

// sitemapFiles lists every page for search engines when the site has a
// BaseURL: sitemap.xml, or, past sitesize.SitemapURLs addresses, a sitemap
// index there and parts numbered from the oldest runs, so a run added
// rewrites only the newest part. rows are newest first.
func (b *Renderer) sitemapFiles(rows []indexRow) []indexFile {
	if b.site.BaseURL == "" {
		return nil
	}
	base := strings.TrimSuffix(b.site.BaseURL, "/") + "/"
	pages := []string{"", "methodology.html"}
	if len(pages)+len(rows) <= sitesize.SitemapURLs {
		for _, r := range rows {
			pages = append(pages, "runs/"+r.ID+"/")
		}
		return []indexFile{madeFile("sitemap.xml", sitemapXML("urlset", "url", base, pages), nil)}
	}
	var parts []indexFile
	var names []string
	for end := len(rows); end > 0 || len(parts) == 0; {
		page := pages
		room := sitesize.SitemapURLs - len(page)
		start := max(end-room, 0)
		for i := end - 1; i >= start; i-- {
			page = append(page, "runs/"+rows[i].ID+"/")
		}
		name := fmt.Sprintf("sitemap-%d.xml", len(parts)+1)
		names = append(names, name)
		parts = append(parts, madeFile(name, sitemapXML("urlset", "url", base, page), nil))
		pages, end = nil, start
	}
	return append(parts, madeFile("sitemap.xml", sitemapXML("sitemapindex", "sitemap", base, names), nil))
}

// sitemapXML lists the addresses base+loc as a sitemap (list "urlset",
// item "url") or a sitemap index ("sitemapindex", "sitemap").
func sitemapXML(list, item, base string, locs []string) []byte {
	var buf bytes.Buffer
	buf.WriteString(xml.Header + "<" + list + ` xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, loc := range locs {
		buf.WriteString("<" + item + "><loc>")
		xml.EscapeText(&buf, []byte(base+loc))
		buf.WriteString("</loc></" + item + ">\n")
	}
	buf.WriteString("</" + list + ">\n")
	return buf.Bytes()
}

// writeSitemap writes the sitemap's files that changed since it was last
// written and removes the parts it no longer has.
func (b *Renderer) writeSitemap(out Folder, rows []indexRow) error {
	_, err := writeChanged(out, b.sitemapFiles(rows), &b.sitemapPrints)
	return err
}
