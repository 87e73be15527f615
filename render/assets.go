package render

import "embed"

// embedded holds the page templates and the static files every site gets
// (styles, scripts, the vendored ECharts), embedded so a built binary needs
// nothing beside it and pages load nothing from outside the site.
//
//go:embed templates static
var embedded embed.FS
