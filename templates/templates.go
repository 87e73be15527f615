// Package templates holds the html/template sources of every page
// (base.html is the layout the others fill), and the text/template of the
// all-measurements table's rows (measurements.tmpl), embedded so a built
// matrixgen needs nothing beside it. Package render parses and executes
// them.
package templates

import "embed"

// FS is this folder's templates.
//
//go:embed *.html *.tmpl
var FS embed.FS
