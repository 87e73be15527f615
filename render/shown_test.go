package render

import (
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestShownRunCutsOnlyWhatIsTooLong: a name past maxShownName and any
// string past maxShownText, however deep, are cut in a copy; a run with
// neither (a long launch command is usual) is shown as it is, uncopied.
func TestShownRunCutsOnlyWhatIsTooLong(t *testing.T) {
	r := testrun.Full(2)
	r.LaunchCommand = strings.Repeat("--flag ", 300)
	if shownRun(r) != r {
		t.Error("a run with nothing too long was copied")
	}

	r.Model.Name = strings.Repeat("m", maxShownName+1)
	var looped *matrixgen.Decode
	for i := range r.Decode {
		if r.Decode[i].Loop != nil {
			looped = &r.Decode[i]
		}
	}
	if looped == nil {
		t.Fatal("the synthetic run has no looped cell")
	}
	looped.Loop.Excerpt = strings.Repeat("x", maxShownText+1)
	shown := shownRun(r)
	if shown == r {
		t.Fatal("a run with too long strings was not copied")
	}
	if got := len(shown.Model.Name); got > maxShownName+len("…") {
		t.Errorf("model name shown at %d bytes", got)
	}
	for _, d := range shown.Decode {
		if d.Loop != nil && len(d.Loop.Excerpt) > maxShownText+len("…") {
			t.Errorf("loop excerpt shown at %d bytes", len(d.Loop.Excerpt))
		}
	}
	if len(r.Model.Name) != maxShownName+1 || len(looped.Loop.Excerpt) != maxShownText+1 {
		t.Error("cutting the copy cut the run")
	}
	if shown.LaunchCommand != r.LaunchCommand {
		t.Error("a launch command under maxShownText was cut")
	}
}
