// Package templates holds the html/template sources of every page
// (base.html is the layout the others fill), and the text/template of a
// run page's two tables of figures, its decode matrix and its
// all-measurements table (tables.tmpl: values escaped beforehand, see
// render/tables.go), embedded so a built matrixgen needs nothing beside
// it. Package render parses and executes them.
package templates

import "embed"

// FS is this folder's templates.
//
//go:embed *.html *.tmpl
var FS embed.FS
