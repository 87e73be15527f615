package matrixgen

import (
	"errors"
	"testing"
)

// FuzzDecodeRun feeds run-file decoding anything: it must never panic, and
// every rejection must be a DecodeError that names the file (and a line
// where the problem has a place).
func FuzzDecodeRun(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(`{"schema":1,"decode":[{"status":"valid"}]}`))
	f.Add([]byte(`{"schema":1e400}`))
	f.Add([]byte("{\"model\":{\"name\":\"\xff\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := DecodeRun("fuzz.json", data)
		if err == nil {
			if run == nil {
				t.Fatal("nil run without an error")
			}
			if _, err := EncodeRun(run); err != nil {
				t.Fatalf("accepted run does not encode: %v", err)
			}
			return
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.File != "fuzz.json" {
			t.Fatalf("rejection is not a placed DecodeError: %v", err)
		}
	})
}
