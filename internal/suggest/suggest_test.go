package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"total_tok_s", "concurrency", "context_tokens", "title", "duration", "ttft_ms"}
	for _, tt := range []struct{ name, want string }{
		{"total_toks", "total_tok_s"},       // one missing
		{"concurency", "concurrency"},       // one missing
		{"titel", "title"},                  // two neighbours swapped: one edit
		{"duraton", "duration"},             // one missing
		{"contxt_tokens", "context_tokens"}, // one missing
		{"gpus", ""},                        // nothing near
		{"ttft", ""},                        // three away from ttft_ms
		{"", ""},
		{"Title", "title"}, // case is an edit
	} {
		if got := Nearest(tt.name, known); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := DidYouMean("total_toks", known); got != `; did you mean "total_tok_s"?` {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("title", known); got != "" {
		t.Errorf("DidYouMean of a known name = %q, want nothing", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"héllo", "hello", 1}, {"titel", "title", 1}, {"ca", "abc", 3},
	} {
		if got := distance(tt.a, tt.b, 100); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := distance(tt.a, tt.b, 1); tt.want >= 1 && got != 1 {
			t.Errorf("distance(%q, %q) with limit 1 = %d, want 1", tt.a, tt.b, got)
		}
	}
}
