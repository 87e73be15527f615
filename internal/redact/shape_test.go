package redact

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"testing"
)

// TestShapes: a secret whose place no rule knows is found by its shape.
func TestShapes(t *testing.T) {
	tests := []struct{ name, secret string }{
		{"openai", "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4"},
		{"openai project", "sk-proj-" + "Ab3_Cd4-Ef5Gh6Ij7Kl8Mn9Op0Qr1St2Uv3Wx4Yz5"},
		{"anthropic", "sk-ant-api03-" + "Zq7vLm2Xc9Rt4WbN8kP3yH6d-Aa1Bb2Cc3Dd4Ee5"},
		{"stripe", "sk_live_" + "51HxYzAbCdEfGhIjKlMnOpQr"},
		{"hugging face", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"},
		{"github classic", "ghp_" + "0123456789abcdefABCDEF0123456789abcd"},
		{"github oauth", "gho_" + "0123456789abcdefABCDEF0123456789abcd"},
		{"github app", "ghs_" + "0123456789abcdefABCDEF0123456789abcd"},
		{"github fine-grained", "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"},
		{"gitlab", "glpat-" + "xYz12AbC-dEf34GhI56jK"},
		{"slack", "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKl"},
		{"aws access key id", "AKIA" + "IOSFODNN7EXAMPL2"},
		{"aws session key id", "ASIA" + "Q3EXAMPLE7ZZ4YQ1"},
		{"google", "AIza" + "SyA-1234567890abcdefghijklmnopqrstu"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"},
		{"base62", "Zq7vLm2Xc9Rt4WbN8kP3yH6d"},
		{"base64 with slashes", "q8Zt3vN/xR7mK2pL+Yw4bC9sD1fG/hJ6kA0eU5oI"},
		{"base64url", "Ab3_Cd4-Ef5Gh6Ij7Kl8Mn9Op0Qr1St2"},
		{"hex 32", "9b2cf535f27731c974343645a3985328"},
		{"hex 64 (a SigV4 signature)", "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"},
		{"letters of both cases", "qWeRtYuIoPaSdFgHjKlZxCvBnM"},
		{"upper and digits", "Q3EX4MPL7ZZ4YQ1K8WN2PX5R"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, form := range []string{"%s", "error: upstream said %s.", `{"detail": "%s"}`, "x-id=%s", "(%s)"} {
				in := fmt.Sprintf(form, tt.secret)
				if got := Text(in); strings.Contains(got, tt.secret) || leaksPiece(got, tt.secret, 12) {
					t.Errorf("kept: %q → %q", in, got)
				}
			}
		})
	}
	block := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0123\nabcdEFGH\n-----END RSA PRIVATE KEY-----"
	for _, in := range []string{block, strings.ReplaceAll(block, "\n", `\n`), block[:50]} {
		if got := Text(in); strings.Contains(got, "MIIEpAIBAAKCAQEA0123") || !strings.Contains(got, "PRIVATE KEY-----") {
			t.Errorf("private key: %q → %q", in, got)
		}
	}
}

// kept is text a run legitimately carries: no shape, place or key rule
// may change a byte of it.
var kept = []string{
	"nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4-DSpark", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8",
	"deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1",
	"gpt-oss-120b", "qwen3:30b-a3b-instruct-2507-q4_K_M", "unsloth/Qwen3-30B-A3B-GGUF:Q4_K_XL",
	"commit 9f2c4e1a7b3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e", "revision 73a5831127a9",
	"vllm/vllm-openai@sha256:5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
	"run 2026-12-04-1624-nemotron-rtx-pro-6000", "id 123e4567-e89b-12d3-a456-426614174000",
	"0.11.2rc2.dev147+g3e2f7a1c9", "570.172.08", "CUDA 12.9", "6.8.0-79-generic", "2026-01-02T03:04:05.123456789Z",
	"1048576 tokens, 32768 batched, 0.81 of 97871 MiB, 12345678901234567890 bytes", "12.5 tok/s at p99 1234.5 ms",
	"/home/user/.cache/huggingface/hub/models--nvidia--NVIDIA-Nemotron-3.5/snapshots/9f2c4e1a7b3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e/config.json",
	"$HOME/env_rtxpro6k-nvidia-vllm-73a5831127a9/bin/vllm", "RTX PRO 6000 Blackwell Server Edition", "AMD Instinct MI300X",
	"AbstractAutowireCapableBeanFactory.createBean", "procGetFullPathNameW", "torch.OutOfMemoryError: CUDA out of memory",
	"sk-learn-compatible-estimator", "task-0123456789abcdef0123", "internationalization", "FLASHINFER_NVCC_THREADS=1",
	"--speculative_config.num_speculative_tokens 3", "--max-num-batched-tokens 32768", "the bearer of bad news",
}

// TestKeptAsItIs: names, figures, versions, ids, paths and the seed run's
// every string come out as they went in, with or without a live key.
// TestOverRedactionFound: ordinary text an attack showed hidden: ids,
// names with a secret's word inside or of another kind, prose, and a
// model's name holding part of a short live key.
func TestOverRedactionFound(t *testing.T) {
	tests := []struct{ key, in string }{
		{"", "request chatcmpl-8f3c2b1a9d4e4f6a8b7c6d5e4f3a2b1c done"},
		{"", "cmpl-8f3c2b1a9d4e4f6a8b7c6d5e4f3a2b1c"},
		{"", "id=req-8f3c2b1a9d4e4f6a8b7c6d5e4f3a2b1c"},
		{"", "key_cache_dtype=auto"},
		{"", "--sort-key latency"},
		{"", "Failed to load token: file not found"},
		{"", "Invalid API key: please check"},
		{"", "monkey: banana"},
		{"", "monkey=banana"},
		{"Nemotron3", "nvidia/NVIDIA-Nemotron-3.5-Lightning-NVFP4"},
	}
	for _, tt := range tests {
		if got := New(tt.key).Text(tt.in); got != tt.in {
			t.Errorf("key %q: %q became %q", tt.key, tt.in, got)
		}
	}
	if got := New("Nemotron3").Text("bad key Nemotron3"); strings.Contains(got, "Nemotron3") {
		t.Errorf("a short key kept whole: %q", got)
	}
}

func TestKeptAsItIs(t *testing.T) {
	for _, key := range []string{"", liveKey, "vllm", "x"} {
		r := New(key)
		for _, s := range append(kept, seedStrings(t)...) {
			if got := r.Text(s); got != s {
				t.Errorf("key %q changed\n %q\nto\n %q", key, s, got)
			}
		}
	}
}

// seedStrings are the strings of the seed run's file, but for the key it
// already hides.
func seedStrings(t *testing.T) []string {
	data, err := os.ReadFile("../../runs/nemotron-3.5-lightning-nvfp4-rtx-pro-6000-vllm.json")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	if len(out) < 50 {
		t.Fatalf("the seed run holds only %d strings", len(out))
	}
	return out
}

// leaksPiece reports whether out holds a piece of secret n characters
// long or longer.
func leaksPiece(out, secret string, n int) bool {
	for i := 0; i+n <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+n]) {
			return true
		}
	}
	return false
}

// shapedFamilies make a secret of a provider's shape from random
// characters.
var shapedFamilies = []func(rng *rand.Rand) string{
	func(rng *rand.Rand) string { return "sk-" + draw(rng, base62, 20+rng.IntN(40)) + "9" },
	func(rng *rand.Rand) string { return "sk-proj-" + draw(rng, base64url, 40+rng.IntN(120)) + "a1" },
	func(rng *rand.Rand) string { return "hf_" + draw(rng, letters, 34) },
	func(rng *rand.Rand) string {
		return []string{"ghp_", "gho_", "ghs_", "ghu_"}[rng.IntN(4)] + draw(rng, base62, 36)
	},
	func(rng *rand.Rand) string { return "github_pat_" + draw(rng, base62+"_", 82) },
	func(rng *rand.Rand) string { return "glpat-" + draw(rng, base64url, 20) },
	func(rng *rand.Rand) string {
		return "xoxb-" + draw(rng, "0123456789", 12) + "-" + draw(rng, base62, 24)
	},
	func(rng *rand.Rand) string { return []string{"AKIA", "ASIA"}[rng.IntN(2)] + draw(rng, upperDigits, 16) },
	func(rng *rand.Rand) string { return "AIza" + draw(rng, base64url, 35) },
	func(rng *rand.Rand) string {
		return "eyJ" + draw(rng, base64url, 20+rng.IntN(20)) + ".eyJ" + draw(rng, base64url, 30+rng.IntN(40)) + "." + draw(rng, base64url, 43)
	},
	func(rng *rand.Rand) string { return draw(rng, "0123456789abcdef", []int{32, 48, 64}[rng.IntN(3)]) },
	func(rng *rand.Rand) string { return draw(rng, base62, 32+rng.IntN(32)) },
	func(rng *rand.Rand) string { return draw(rng, base64std, 40+rng.IntN(40)) + "==" },
}

const (
	letters     = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	base62      = letters + "0123456789"
	base64url   = base62 + "-_"
	base64std   = base62 + "+/"
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// draw is n characters from alphabet, with letters and digits at the
// ends (a key's ends are; a separator there is not the key's).
func draw(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
		if (i == 0 || i == n-1) && !isAlnum(b[i]) {
			b[i] = 'Q'
		}
	}
	return string(b)
}

// carriers are realistic texts with a place (%s) a secret can stand in,
// with no name that says secret.
var carriers = []string{
	`env MAX_JOBS=2 vllm serve nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4 --served-model-name nemotron --port 8000 --extra %s --max-num-seqs 128`,
	`HTTP 401: {"error": {"message": "Incorrect value provided: %s. You can find yours at https://platform.example/account.", "type": "invalid_request_error", "code": 401}}`,
	`Get "http://127.0.0.1:8000/v1/models?x=%s&model=m": dial tcp 127.0.0.1:8000: connect: connection refused`,
	`Traceback (most recent call last):\n  File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 412\nValueError: bad header value '%s'`,
	`<Error><Code>SignatureDoesNotMatch</Code><StringToSign>%s</StringToSign><RequestId>4442587FB7D0A2F9</RequestId></Error>`,
	`%s`,
}

// encodings write a text as a message may carry it.
var encodings = []func(string) string{
	func(s string) string { return s },
	func(s string) string { return url.QueryEscape(s) },
	func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) },
	func(s string) string { return strings.ReplaceAll(s, " ", "\u00a0") },
	func(s string) string { return strings.ReplaceAll(s, " ", "\u3000") },
}

// TestGeneratedShapedSecretsNeverSurvive places secrets of every shape,
// of random lengths and characters, in realistic commands, error bodies
// and URLs, encoded at random: neither the secret nor any piece of it of
// eight characters survives.
func TestGeneratedShapedSecretsNeverSurvive(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for i := range 3000 {
		secret := shapedFamilies[rng.IntN(len(shapedFamilies))](rng)
		carrier := carriers[rng.IntN(len(carriers))]
		in := encodings[rng.IntN(len(encodings))](fmt.Sprintf(carrier, secret))
		got := Text(in)
		if strings.Contains(got, secret) || leaksPiece(got, secret, 8) {
			t.Fatalf("case %d: kept\n in:  %q\n out: %q", i, in, got)
		}
		if again := Text(got); again != got {
			t.Fatalf("case %d: redacting twice changed %q to %q", i, got, again)
		}
	}
}

// TestGeneratedPlacesInEveryEncoding: a secret in any place a rule knows
// (families × secretNames), of any characters, survives no encoding or
// separator a message may use; none of its pieces of eight characters
// either.
func TestGeneratedPlacesInEveryEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for i := range 3000 {
		family := families[rng.IntN(len(families))]
		alphabet := base62 + "-_.~+"
		if strings.Contains(family, "://") {
			alphabet += "@:!$"
		}
		secret := draw(rng, alphabet, 10+rng.IntN(30))
		placed := fmt.Sprintf(family, secretNames[rng.IntN(len(secretNames))], secret)
		sep := []string{" ", "\u00a0", "\u2003", "\u3000", "\t", `\n`}[rng.IntN(6)]
		placed = strings.Replace(placed, " ", sep, 1)
		carrier := carriers[rng.IntN(len(carriers))]
		in := encodings[rng.IntN(3)](fmt.Sprintf(carrier, placed))
		for _, r := range []*Redactor{New(""), New(secret)} {
			got := r.Text(in)
			if strings.Contains(got, secret) || leaksPiece(got, secret, 8) {
				t.Fatalf("case %d: kept\n in:  %q\n out: %q", i, in, got)
			}
		}
	}
}

// TestGeneratedKeyPieces: any piece of the live key of eight characters
// (half a shorter key), anywhere, even joined to letters, and its start or
// end of four where a cut left it, never survives.
func TestGeneratedKeyPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for i := range 3000 {
		key := shapedFamilies[rng.IntN(len(shapedFamilies))](rng)
		if rng.IntN(3) == 0 {
			key = draw(rng, base62, minPieceKey+rng.IntN(8)) // not of any shape; shorter keys are looked for whole (key.go)
		}
		if weakness(key) != "" {
			continue
		}
		r := New(key)
		n := min(minPiece, len(key)/2)
		a := rng.IntN(len(key) - n + 1)
		piece := key[a : a+n+rng.IntN(len(key)-a-n+1)]
		if strings.Trim(piece, "0123456789") == "" {
			continue // a figure the key shares: kept
		}
		words := []string{"matrixgen", "invalid", "x", "key", "vllm"}
		in := words[rng.IntN(5)] + piece + words[rng.IntN(5)]
		in = strings.Join([]string{carriers[0][:40], in, "tail"}, []string{" ", "", "\u00a0"}[rng.IntN(3)])
		if got := r.Text(in); strings.Contains(got, piece) {
			t.Fatalf("case %d: key %q, piece %q kept\n in:  %q\n out: %q", i, key, piece, in, got)
		}
		head, tail := key[:minEdge+rng.IntN(n-minEdge+1)], key[len(key)-minEdge-rng.IntN(n-minEdge+1):]
		for _, in := range []string{"error: bad key " + head, "bad key " + head + "… (12 more bytes)", tail + `"} (cut)`, "…" + tail} {
			got := r.Text(in)
			for _, part := range []string{head, tail} {
				if strings.Contains(in, part) && !ordinary(part) && strings.Contains(got, part) {
					t.Fatalf("case %d: key %q, cut piece %q kept\n in:  %q\n out: %q", i, key, part, in, got)
				}
			}
		}
	}
}

// FuzzSecretsNeverSurvive: a secret of any shape the fuzzer draws, placed
// by name or by shape in any text, encoded as a message may carry it,
// never survives, nor any piece of it of eight characters; and redacting
// twice changes nothing more.
func FuzzSecretsNeverSurvive(f *testing.F) {
	f.Add("vllm serve m --port 8000", uint64(1), uint8(0), uint8(0), uint8(0), uint16(0))
	f.Add(`{"error": "bad"}`, uint64(7), uint8(3), uint8(1), uint8(2), uint16(5))
	f.Add("", uint64(99), uint8(9), uint8(4), uint8(1), uint16(3))
	f.Fuzz(func(t *testing.T, text string, seed uint64, shape, place, encoding uint8, at uint16) {
		rng := rand.New(rand.NewPCG(seed, 21))
		secret := shapedFamilies[int(shape)%len(shapedFamilies)](rng)
		placed := secret
		if place%2 == 1 {
			family := families[int(place/2)%len(families)]
			placed = fmt.Sprintf(family, secretNames[int(seed%uint64(len(secretNames)))], secret)
		}
		if strings.ContainsAny(text, "\"'%\\&") {
			return // the text must not open a quote or an escape the secret would close
		}
		i := int(at) % (len(text) + 1)
		in := encodings[int(encoding)%len(encodings)](text[:i] + " " + placed + " " + text[i:])
		for _, r := range []*Redactor{New(""), New(secret)} {
			out := r.Text(in)
			if strings.Contains(out, secret) || leaksPiece(out, secret, 8) {
				t.Fatalf("kept\n in:  %q\n out: %q", in, out)
			}
			// Plain text is redacted once for all; an encoded one may lose
			// a sign of its encoding beside a Mark the second time.
			if again := r.Text(out); again != out && encoding%uint8(len(encodings)) == 0 {
				t.Fatalf("redacting twice changed %q to %q", out, again)
			}
		}
	})
}
