// Package static holds the files every site gets under assets/: styles,
// the pages' script, the icon and the vendored ECharts (its version and
// licence beside it), embedded so pages load nothing from outside the
// site. Package render copies them; a new kind of file needs its pattern
// added below.
package static

import "embed"

// FS is this folder's files, without this Go source.
//
//go:embed *.css *.js *.svg vendor
var FS embed.FS
