package render

import (
	"slices"
	"sync"

	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/runfile"
)

// published is the run as the site publishes it, its run.json with it:
//
//   - without the server's address (probe.base_url) unless the site
//     publishes addresses. The address is an internal one as often as not
//     (10.x, a host on a lab's network, its port): the run file keeps it
//     for `run -resume`, the site does not need it.
//   - its launch command with its secrets hidden. `matrixgen run` and
//     `import` hide them before they save, but a run file written by hand
//     may hold a key there, and the page shows the command whole; hid
//     says so, for the build to name the run. Only the launch command is
//     read again: the one text a person types, and one call of the
//     redaction step (~20 µs for a short command, ~0.4 ms for 900 bytes),
//     where every text of a run would cost ~0.3 ms a run.
//
// A run with neither is published byte for byte.
func (b *Renderer) published(e runfile.Entry) (out runfile.Entry, hid bool, err error) {
	run := *e.Run
	changed := false
	if p := run.Probe; !b.site.PublishServerAddress && p != nil && p.BaseURL != "" {
		probe := *p
		probe.BaseURL = ""
		run.Probe = &probe
		changed = true
	}
	if hidden := redact.Text(run.LaunchCommand); hidden != run.LaunchCommand {
		run.LaunchCommand, hid, changed = hidden, true, true
	}
	if !changed {
		e.Raw, err = e.JSON()
		return e, false, err
	}
	e.Run = &run
	e.Raw, err = runfile.Encode(&run)
	return e, hid, err
}

// idList is run ids gathered by the build's workers.
type idList struct {
	mu  sync.Mutex
	ids []string
}

func (l *idList) add(id string) {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
}

// sorted is the ids in order, whichever worker added each.
func (l *idList) sorted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.ids)
	return l.ids
}
