package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// TestSimScheduleWarning: measuring the sim, the runner warns on its own
// terminal each time the sim falls further behind its schedule (its
// figures then run slow), not while it keeps up nor again for the same
// lag; a server that does not answer is not asked again; a run that is
// not of the sim asks nothing.
func TestSimScheduleWarning(t *testing.T) {
	reports := []string{
		`{"lost_seconds": 0.1, "scheduled_seconds": 60, "late_steps": 3, "keeping_up": true}`,
		`{"lost_seconds": 2.5, "scheduled_seconds": 90, "late_steps": 40, "keeping_up": false}`,
		`{"lost_seconds": 2.5, "scheduled_seconds": 120, "late_steps": 40, "keeping_up": false}`,
		`{"lost_seconds": 4, "scheduled_seconds": 150, "late_steps": 61, "keeping_up": false}`,
		`{"lost_seconds": 1e308, "scheduled_seconds": 1e308, "late_steps": 1, "keeping_up": false}`,
	}
	asked := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sim/timing" || asked >= len(reports) {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, reports[asked])
		asked++
	}))
	defer srv.Close()
	var warned []string
	sw := &sweeper{c: newClient(srv.URL, "", 1, nil), run: &matrixgen.Run{Simulated: true},
		warnf: func(format string, a ...any) { warned = append(warned, fmt.Sprintf(format, a...)) }}
	for range len(reports) + 2 {
		sw.checkSimSchedule(context.Background())
	}
	if asked != len(reports) || len(warned) != 2 ||
		!strings.Contains(warned[0], "2.5 s behind its schedule of 90.0 s (40 late steps)") ||
		!strings.Contains(warned[1], "4.0 s behind its schedule of 150.0 s (61 late steps)") {
		t.Errorf("asked %d times, warned %q", asked, warned)
	}
	// Past an answer no sim gives, it is not asked again.
	if sw.simLost != -1 {
		t.Errorf("after 1e308 s behind the server is still asked (simLost %v)", sw.simLost)
	}
	asked = 0
	real := &sweeper{c: newClient(srv.URL, "", 1, nil), run: &matrixgen.Run{}, warnf: sw.warnf}
	real.checkSimSchedule(context.Background())
	if asked != 0 {
		t.Error("a run of a real server asked it for the sim's timing")
	}
}
