// Package sitesize holds the sizes that split a site's listings into files
// (index pages, chunks, sitemaps, runs.csv), variables so that the tests of
// render and site split a site of a few runs as one of thousands is split.
package sitesize

var (
	// IndexPageRuns is how many runs a page of the index lists, and
	// IndexChunkRuns how many runs' summaries one chunk holds: a page
	// stays around a hundred kilobytes, a chunk a few hundred.
	IndexPageRuns  = 100
	IndexChunkRuns = 1000
	// SitemapURLs is the most addresses one sitemap file may list (the
	// sitemaps.org protocol's limit); a site with more is listed in parts
	// named by a sitemap index at sitemap.xml.
	SitemapURLs = 50_000
	// SpreadsheetRows is the most rows a spreadsheet opens (Excel's
	// 1,048,576, header included; LibreOffice's is the same). A site whose
	// runs.csv has more offers it split by month as well:
	// runs-YYYY-MM.csv.
	SpreadsheetRows = 1 << 20
)
