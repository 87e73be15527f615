package importer

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLLMInferenceBench(t *testing.T) {
	res, err := LLMInferenceBench("benchmark_results.json", read(t, "benchmark_results.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Run
	if r.Tool.Name != "llm-inference-bench" || r.Tool.Version != "0.7.6" || r.Engine.Name != "vllm" || r.Model.Name != "nemotron" {
		t.Errorf("identity %+v %+v %+v", r.Tool, r.Engine, r.Model)
	}
	if r.StartedAt.Format("2006-01-02T15:04") != "2026-11-30T10:00" || r.Sweep.DurationSeconds != 30 || r.Sweep.MaxOutputTokens != 4096 {
		t.Errorf("sweep %+v, started %v", r.Sweep, r.StartedAt)
	}
	if len(r.Prefill) != 2 || r.Prefill[0].ContextTokens != 8192 || *r.Prefill[0].TTFTMs != 1778 || *r.Prefill[1].PromptTokS != 33000 || r.Prefill[1].PromptTokens != 16203 {
		t.Errorf("prefill %+v", r.Prefill)
	}
	if len(r.Decode) != 4 {
		t.Fatalf("%d cells, want 4 (context 0 left out)", len(r.Decode))
	}
	c := r.Decode[0]
	if c.Status != matrixgen.StatusValid || *c.TotalTokS != 445.7 || *c.PerRequestTokS != 457.2 || c.TTFTMs.P50 != 256 ||
		*c.TTFTMs.P99 != 301 || c.TBTMs.P50 != 2.2 || *c.Completed != 3 || *c.OutputTokens != 13370 || c.TokenSource != matrixgen.TokensContinuousUsage {
		t.Errorf("8K × 1: %+v", c)
	}
	want := []matrixgen.Status{matrixgen.StatusValid, matrixgen.StatusLooped, matrixgen.StatusQueued, matrixgen.StatusError}
	for i, d := range r.Decode {
		if d.Status != want[i] {
			t.Errorf("cell %d: %s (%s), want %s", i, d.Status, d.Reason, want[i])
		}
	}
	if r.Decode[3].Reason != "server returned 500" || r.Decode[1].TotalTokS == nil {
		t.Errorf("the error's reason %q, the looped figure %v", r.Decode[3].Reason, r.Decode[1].TotalTokS)
	}
	if !strings.Contains(strings.Join(res.Notes, " "), "1 result without a context length or concurrency (context 0 is the tool's short-prompt test) was left out") {
		t.Errorf("notes %q do not say what was left out", res.Notes)
	}
}

func TestLLMInferenceBenchRejects(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`{"metadata": {}}`, `no "results" array`},
		{`{"metadata": {}, "results": []}`, "metadata.model is missing"},
		{`{"metadata": {"model": "m"}, "results": [3]}`, "results[0]: want an object"},
		{"{\n  \"results\": [,]}", "x.json:2:"},
		{`{"metadata": {"model": "m"}, "results": [{"concurrency": 1, "context_tokens": 8, "aggregate_tps": 1}, {"concurrency": 1, "context_tokens": 8, "aggregate_tps": 2}]}`, "appears twice"},
	} {
		if _, err := LLMInferenceBench("x.json", []byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.doc, err, tt.want)
		}
	}
}

func TestVLLMBenchServe(t *testing.T) {
	res, err := VLLMBenchServe([]string{"vllm-c8.json", "vllm-c1.json"}, [][]byte{read(t, "vllm-c8.json"), read(t, "vllm-c1.json")}, "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Run
	if r.Engine.Name != "vllm" || r.Model.Name != "NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4" || r.Sweep.DecodeTest != matrixgen.DecodeFixedCount {
		t.Errorf("%+v %+v %+v", r.Engine, r.Model, r.Sweep)
	}
	if len(r.Decode) != 2 || r.Sweep.Concurrency[0] != 1 || r.Sweep.Contexts[0] != 8192 {
		t.Fatalf("cells %+v, sweep %+v", r.Decode, r.Sweep)
	}
	c8 := r.Decode[0]
	if c8.Concurrency != 8 || *c8.TotalTokS != 862.3 || c8.TTFTMs.P50 != 721 || *c8.TTFTMs.P99 != 1100 || c8.TBTMs.P50 != 8 ||
		*c8.PerRequestTokS != 125 || *c8.Completed != 80 || *c8.OutputTokens != 81920 || *c8.WindowSeconds != 95 || c8.TokenSource != "" {
		t.Errorf("8K × 8: %+v", c8)
	}
	if r.StartedAt.Format("15:04") != "10:00" {
		t.Errorf("started %v, want the earliest file's date", r.StartedAt)
	}
}

func TestVLLMBenchServeRejects(t *testing.T) {
	c1 := read(t, "vllm-c1.json")
	noConc := []byte(strings.Replace(string(c1), `"max_concurrency": 1`, `"max_concurrency": null`, 1))
	otherBackend := []byte(strings.Replace(string(c1), `"backend": "vllm"`, `"backend": "openai-chat"`, 1))
	for _, tt := range []struct {
		files  [][]byte
		engine string
		want   string
	}{
		{[][]byte{noConc}, "", "no max_concurrency"},
		{[][]byte{c1, c1}, "", "a second file for 8K × 1"},
		{[][]byte{otherBackend}, "", "name it with -engine"},
	} {
		names := make([]string, len(tt.files))
		for i := range names {
			names[i] = "f.json"
		}
		if _, err := VLLMBenchServe(names, tt.files, tt.engine); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
	if res, err := VLLMBenchServe([]string{"f.json"}, [][]byte{otherBackend}, "sglang"); err != nil || res.Run.Engine.Name != "sglang" {
		t.Errorf("-engine sglang: %v", err)
	}
}

// TestNotesNameTheFileNotThePath: the notes are published; the importing
// machine's folders are not for publishing.
func TestNotesNameTheFileNotThePath(t *testing.T) {
	res, err := LLMInferenceBench("/home/someone/private/benchmark_results.json", read(t, "benchmark_results.json"))
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "\n")
	if strings.Contains(notes, "/home/someone") || !strings.Contains(notes, "`benchmark_results.json`") {
		t.Errorf("notes: %s", notes)
	}
}

// TestDuplicateKeysAndNegativeFigures: a repeated key was accepted (the
// last one winning) and a negative aggregate_tps became "missing". Both
// are errors that say where.
func TestDuplicateKeysAndNegativeFigures(t *testing.T) {
	src := string(read(t, "benchmark_results.json"))
	dup := strings.Replace(src, `"aggregate_tps":`, `"aggregate_tps": 1, "aggregate_tps":`, 1)
	if _, err := LLMInferenceBench("b.json", []byte(dup)); err == nil || !strings.Contains(err.Error(), `the key "aggregate_tps" appears twice`) || !strings.Contains(err.Error(), "b.json:") {
		t.Errorf("duplicate key: %v", err)
	}
	neg := strings.Replace(src, `"aggregate_tps": `, `"aggregate_tps": -`, 1)
	if neg == src {
		neg = strings.Replace(src, `"aggregate_tps":`, `"aggregate_tps":-`, 1)
	}
	_, err := LLMInferenceBench("b.json", []byte(neg))
	if err == nil || !strings.Contains(err.Error(), "aggregate_tps") || !strings.Contains(err.Error(), "is negative") {
		t.Errorf("negative aggregate_tps: %v", err)
	}
	t.Log(err)
}

// FuzzLLMInferenceBench: any bytes give a run or an error, never a panic.
func FuzzLLMInferenceBench(f *testing.F) {
	f.Add([]byte(`{"metadata":{"model":"m"},"results":[{"aggregate_tps":1,"aggregate_tps":2}]}`))
	f.Add([]byte(`{"a":[{"b":{}},{"b":[]}],"a":1}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		LLMInferenceBench("f.json", data)
	})
}

// TestLargeMembersStayBytes: a member of more than maxMemberValues values
// is not read into Go values (10 million numbers took 800 MB boxed); a
// format that needs it says so, one that does not (vLLM's per-request
// itls) imports as before.
func TestLargeMembersStayBytes(t *testing.T) {
	big := "[" + strings.Repeat("0.5,", maxMemberValues) + "1]"
	if _, err := LLMInferenceBench("b.json", []byte(`{"metadata":{"model":"m"},"results":`+big+`}`)); err == nil || !strings.Contains(err.Error(), `"results" holds more than 1000000 values`) {
		t.Errorf("a results member of a million numbers: %v", err)
	}
	doc, err := decodeObject("v.json", []byte(`{"model_id":"m","itls":[`+big+`],"completed":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, big := doc["itls"].(oversized); !big || doc.str("model_id") != "m" {
		t.Errorf("itls %T, model %q", doc["itls"], doc.str("model_id"))
	}
	if n, ok := doc.intField("completed"); !ok || n != 3 {
		t.Errorf("completed %d, %v", n, ok)
	}
}

// TestValuesAreBoundedForTheWholeFile: the bound is the file's, not a
// member's: 33 members of nearly a million values each took 1.1 GB.
func TestValuesAreBoundedForTheWholeFile(t *testing.T) {
	member := "[" + strings.Repeat("0,", maxMemberValues/4) + "0]"
	var b strings.Builder
	b.WriteString(`{"metadata":{"model":"m"}`)
	for i := range 8 {
		fmt.Fprintf(&b, `,"m%d":%s`, i, member)
	}
	b.WriteString(`,"results":[]}`)
	doc, err := decodeObject("b.json", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for k, v := range doc {
		if _, big := v.(oversized); !big && strings.HasPrefix(k, "m") && k != "metadata" {
			read++
		}
	}
	if read > 4 {
		t.Errorf("%d members of a quarter million values each were read; the file's bound allows 3", read)
	}
}

// TestImportHidesSecrets: another tool's file carried a key in a failure
// reason (a server's 401 echoing it), a version and the model's name, and
// the import kept them all for the site to publish (found by an
// attacker). Every text of the run and its notes is redacted as the
// runner's are.
func TestImportHidesSecrets(t *testing.T) {
	data := strings.NewReplacer(
		`"version": "`, `"version": "token=hunter2hunter2 `,
		`"model": "`, `"model": "Authorization: Bearer hunter2hunter2 `,
	).Replace(string(read(t, "benchmark_results.json")))
	data = strings.Replace(data, `"results": [`, `"results": [{"concurrency": 64, "context_tokens": 8192, "failure_reason": "HTTP 401: {\"error\":\"invalid key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12\",\"api_key\":\"hunter2hunter2\"}"}, `, 1)
	if !strings.Contains(data, "hunter2") || !strings.Contains(data, "sk-proj") {
		t.Fatal("the fixture did not take the secrets")
	}
	res, err := LLMInferenceBench("benchmark_results.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	res.Run.MapText(func(s string) string { b.WriteString(s + "\n"); return s })
	all := b.String() + strings.Join(res.Notes, "\n")
	if strings.Contains(all, "hunter2") || strings.Contains(all, "Ab12Cd34") || !strings.Contains(all, "<redacted>") {
		t.Errorf("the import kept a secret:\n%s", all)
	}
}

// TestLLMInferenceBenchSaysWhatPrefillItLeftOut: prefill entries whose key
// is no context length ("short", "0", "-8") or whose value is no object
// were dropped without a word.
func TestLLMInferenceBenchSaysWhatPrefillItLeftOut(t *testing.T) {
	doc := `{"metadata": {"engine": "vllm", "model": "m"}, "prefill": {"8192": {"tok_per_sec": 4601, "ttft_seconds": 1.778},
		"short": {"tok_per_sec": 1}, "0": {"tok_per_sec": 1}, "-8": {"tok_per_sec": 1}, "16384": 5},
		"results": [{"context_tokens": 8192, "concurrency": 1, "aggregate_tps": 445.7}]}`
	res, err := LLMInferenceBench("b.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Run.Prefill) != 1 {
		t.Errorf("prefill %+v, want the 8K row alone", res.Run.Prefill)
	}
	if !strings.Contains(strings.Join(res.Notes, " "), "4 entries of prefill whose key is not a context length") {
		t.Errorf("notes %q do not say what was left out", res.Notes)
	}
}
