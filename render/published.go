package render

import "github.com/matrixgen/matrixgen/runfile"

// publishedJSON is the run file as the site publishes it (run.json): its
// bytes as written, but without the server's address (probe.base_url)
// unless the site publishes addresses. The address is an internal one as
// often as not (10.x, a host on a lab's network, its port): the run file
// keeps it for `run -resume`, the site does not need it. A run without an
// address is published byte for byte.
func (b *Renderer) publishedJSON(e runfile.Entry) ([]byte, error) {
	p := e.Run.Probe
	if b.site.PublishServerAddress || p == nil || p.BaseURL == "" {
		return e.JSON()
	}
	run, probe := *e.Run, *p
	probe.BaseURL = ""
	run.Probe = &probe
	return runfile.Encode(&run)
}
