package runner

import (
	"strings"
	"testing"
)

func TestDetectLoop(t *testing.T) {
	story := "The lighthouse keeper walked down to the harbour every morning before the boats went out, counting gulls and checking the ropes. " +
		"Nobody in the village remembered when he had arrived, only that the light had never once failed in a storm since then. "
	loopy := story + strings.Repeat("and the same words came back again ", 12)
	tests := []struct {
		name, text string
		unit       string
	}{
		{"natural text", strings.Repeat(story, 1)[:200] + " " + story[50:], ""},
		{"a phrase repeated", loopy, "and the same words came back again"},
		{"one word repeated", story + strings.Repeat("no ", 60), "no"},
		{"too few repeats", story + strings.Repeat("over and over ", 2), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := detectLoop([]byte(tt.text), 1000+len(tt.text))
			switch {
			case tt.unit == "" && ev != nil:
				t.Errorf("found a loop %+v in text that has none", ev)
			case tt.unit != "" && ev == nil:
				t.Error("missed the loop")
			case ev != nil && ev.Unit != tt.unit:
				t.Errorf("unit %q, want %q", ev.Unit, tt.unit)
			}
		})
	}
	ev := detectLoop([]byte(loopy), 1000+len(loopy))
	if want := 1000 + len(story); ev.StartOffset != want {
		t.Errorf("loop starts at byte %d, want %d", ev.StartOffset, want)
	}
	if !strings.HasPrefix(ev.Excerpt, "and the same words") {
		t.Errorf("excerpt %q does not start at the loop", ev.Excerpt)
	}
}
