package sim

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestTimingEndpoint: GET /sim/timing says how far the sim kept to its
// schedule, for a client measuring it to warn on its own terminal.
func TestTimingEndpoint(t *testing.T) {
	s, url := startSim(t, fastProfile())
	resp, err := http.Get(url + "/sim/timing")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got TimingReport
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := s.Timing()
	if resp.StatusCode != 200 || got.Steps != want.Steps || got.KeepingUp != want.KeepingUp() || got.LostSeconds != want.Lost.Seconds() {
		t.Errorf("status %d, %+v; the sim's timing %+v", resp.StatusCode, got, want)
	}
}
