package render

import (
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/runfile"
)

// published is the run as the site publishes it, its run.json with it:
// without the server's address (probe.base_url) unless the site publishes
// addresses, often a lab's internal ones; and its launch command with its
// secrets hidden (hid), as a run file written by hand may hold a key there.
// Only the launch command, the one text a person types, is redacted again:
// every text would cost ~0.3 ms a run. A run with neither is published
// byte for byte.
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
