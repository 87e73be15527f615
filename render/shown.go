package render

import (
	"slices"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen"
)

// A page shows a bounded part of each string of a run, and run.json the
// whole: a 60 MB model name must not make every page 60 MB.
const (
	maxShownName = 200  // names and versions, shown in titles and tables
	maxShownText = 4000 // everything else: reasons, commands, evidence
)

// shownRun is r, or, when some string is too long to show whole, a copy
// with its strings cut, sharing with r what it does not cut. Every string
// of a run is listed here (TestShownRunCutsEveryString).
func shownRun(r *matrixgen.Run) *matrixgen.Run {
	c := *r
	// Names are shown in titles and tables, cut shorter than the rest.
	cut := cutAll(maxShownName, &c.Hardware.Type, &c.Hardware.GPU, &c.Hardware.CPU, &c.Hardware.OS,
		&c.Hardware.Driver, &c.Engine.Name, &c.Engine.Version, &c.Engine.Quantization, &c.Engine.Backend,
		&c.Engine.Repository, &c.Engine.Build, &c.Engine.Commit, &c.Model.Name, &c.Model.ServedName,
		&c.Model.Revision, &c.Tool.Name, &c.Tool.Version)
	cut = cutAll(maxShownText, &c.LaunchCommand, &c.Hardware.Kernel, &c.Hardware.CUDA, &c.Hardware.PCIe,
		&c.Sweep.DecodeTest, &c.Sweep.PrefillMode, &c.Sweep.CacheMode) || cut
	cut = cutEach(&c.Hardware.Given, cutText) || cut
	cut = cutEach(&c.ResumedDespite, cutText) || cut
	cut = cutPointed(&c.Probe, func(p *matrixgen.Probe) bool {
		return cutAll(maxShownText, &p.Engine, &p.EngineVersion, &p.Model, &p.ModelRoot, &p.Tokenizer, &p.KVSource,
			&p.BaseURL)
	}) || cut
	cut = cutEach(&c.Prefill, func(p *matrixgen.Prefill) bool {
		return cutAll(maxShownText, (*string)(&p.Status), &p.Reason, &p.ServerClock, &p.Note)
	}) || cut
	cut = cutEach(&c.Decode, cutDecode) || cut
	if !cut {
		return r // the usual case: nothing to cut, nothing copied
	}
	return &c
}

// cutDecode cuts a decode cell's strings and its repeats', reporting
// whether it cut any.
func cutDecode(d *matrixgen.Decode) bool {
	cut := cutAll(maxShownText, (*string)(&d.Status), &d.Reason, (*string)(&d.TokenSource), &d.PowerMissing)
	cut = cutPointed(&d.Loop, func(l *matrixgen.LoopEvidence) bool {
		return cutAll(maxShownText, &l.Unit, &l.Excerpt)
	}) || cut
	cut = cutPointed(&d.ServerCount, func(s *matrixgen.ServerCount) bool {
		return cutAll(maxShownText, &s.Source)
	}) || cut
	return cutEach(&d.Repeats, cutDecode) || cut
}

// cutAll cuts each string to n bytes (cutText), reporting whether it cut
// any.
func cutAll(n int, strings ...*string) bool {
	cut := false
	for _, s := range strings {
		if len(*s) > n {
			*s, cut = cutTo(*s, n), true
		}
	}
	return cut
}

// cutText cuts a string of a list to maxShownText bytes.
func cutText(s *string) bool { return cutAll(maxShownText, s) }

// cutEach cuts copies of the elements of *list: where cut changes one,
// *list becomes a copy of the list holding the changed elements.
func cutEach[T any](list *[]T, cut func(*T) bool) bool {
	var out []T
	for i, e := range *list {
		if cut(&e) {
			if out == nil {
				out = slices.Clone(*list)
			}
			out[i] = e
		}
	}
	if out == nil {
		return false
	}
	*list = out
	return true
}

// cutPointed cuts a copy of **p: where cut changes it, *p points to the
// copy.
func cutPointed[T any](p **T, cut func(*T) bool) bool {
	if *p == nil {
		return false
	}
	c := **p
	if !cut(&c) {
		return false
	}
	*p = &c
	return true
}

// cutTo cuts s to at most n bytes on a character boundary, marked with an
// ellipsis.
func cutTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
