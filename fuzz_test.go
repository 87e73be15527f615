package matrixgen

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
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
	f.Add([]byte(`{"schema":1,"tool":{"name":"t\u00e9\ud83d\ude00\ud800x"},"engine":{"name":"e"},"model":{"name":"m","max_model_len":-0},"probe":null,"sweep":{"contexts":[],"ignore_eos":false},"prefill":null}`))
	if sample, err := os.ReadFile(sampleRun); err == nil {
		f.Add(sample)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := DecodeRun("fuzz.json", data)
		if err == nil {
			if run == nil {
				t.Fatal("nil run without an error")
			}
			if _, err := EncodeRun(run); err != nil {
				t.Fatalf("accepted run does not encode: %v", err)
			}
			// The one-pass decoder reads what encoding/json reads, the same
			// way: anything it accepts, encoding/json decodes to an equal run.
			var want Run
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatalf("accepted a file encoding/json rejects: %v", err)
			}
			if !reflect.DeepEqual(run, &want) {
				t.Fatalf("decoded differently from encoding/json:\n got %+v\nwant %+v", run, &want)
			}
			return
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.File != "fuzz.json" {
			t.Fatalf("rejection is not a placed DecodeError: %v", err)
		}
	})
}
