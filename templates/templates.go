// Package templates holds the html/template sources of every page
// (base.html is the layout the others fill), embedded so a built matrixgen
// needs nothing beside it. Package render parses and executes them.
package templates

import "embed"

// FS is this folder's templates.
//
//go:embed *.html
var FS embed.FS
