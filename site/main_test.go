package site

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/matrixgen/matrixgen/render"
)

// Build is BuildContext without an end.
func Build(src render.Source, site render.Site, out string) (render.Stats, error) {
	return BuildContext(context.Background(), src, site, out)
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// indexPageName is the file of a page of the index (1-based, from the
// oldest) other than the newest, as package render names it.
func indexPageName(page int) string {
	return "index-" + strconv.Itoa(page) + ".html"
}

// indexChunkName is the file of a chunk of the index's summaries.
func indexChunkName(chunk int) string {
	return fmt.Sprintf("assets/index/chunk-%04d.js", chunk)
}

// indexSiteName is the script of what every page of the index shows of
// the whole site.
const indexSiteName = "assets/index/site.js"

// indexValuesName is the file of a chunk of a filter's values.
func indexValuesName(name string, chunk int) string {
	return fmt.Sprintf("assets/index/values-%s-%04d.js", name, chunk)
}
