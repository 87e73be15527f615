package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/term"
)

func TestPlaces(t *testing.T) {
	tests := []struct{ in, want string }{
		{"vllm serve m --api-key sk-123 --port 8000", "vllm serve m --api-key <redacted> --port 8000"},
		{"vllm serve m --api-key=sk-123", "vllm serve m --api-key=<redacted>"},
		{`vllm serve m --api-key "a b c"`, `vllm serve m --api-key "<redacted>"`},
		{"huggingface-cli download m --token hf_abc", "huggingface-cli download m --token <redacted>"},
		{"x --hf-token hf_abc --hf-token=hf_def", "x --hf-token <redacted> --hf-token=<redacted>"},
		{"x --hf_token hf_abc --api_key k1 --apikey k2 --key k3 --auth k4", "x --hf_token <redacted> --api_key <redacted> --apikey <redacted> --key <redacted> --auth <redacted>"},
		{"x --db-password p --passwd q --client-secret s --credentials c", "x --db-password <redacted> --passwd <redacted> --client-secret <redacted> --credentials <redacted>"},
		{"HF_TOKEN=hf_abc OPENAI_API_KEY=sk-1 AWS_SECRET=s vllm serve", "HF_TOKEN=<redacted> OPENAI_API_KEY=<redacted> AWS_SECRET=<redacted> vllm serve"},
		{`curl -H "Authorization: Bearer sk-123" http://x`, `curl -H "Authorization: Bearer <redacted>" http://x`},
		{`curl -H 'X-Api-Key: abc123' -H 'Accept: text/plain' http://x`, `curl -H 'X-Api-Key: <redacted>' -H 'Accept: text/plain' http://x`},
		{`curl --header "Authorization: Basic dXNlcjpw" http://x`, `curl --header "Authorization: Basic <redacted>" http://x`},
		{`x --override '{"api_key": "abc", "max_tokens": 4096}'`, `x --override '{"api_key": "<redacted>", "max_tokens": 4096}'`},
		{`{"hf_token":"a\"b","n":1}`, `{"hf_token":"<redacted>","n":1}`},
		{"git clone https://TOKEN123@github.com/o/r.git", "git clone https://<redacted>@github.com/o/r.git"},
		{"curl https://user:pa55@host:8000/v1 -X", "curl https://<redacted>@host:8000/v1 -X"},
		{"psql postgres://u:p@ss:w@rd@db:5432/x", "psql postgres://<redacted>@db:5432/x"},
		{"GET http://h/v1?api_key=abc&model=m#x", "GET http://h/v1?api_key=<redacted>&model=m#x"},
		{"error: invalid token Bearer eyJ.abc.def", "error: invalid token Bearer <redacted>"},
		{"the bearer of bad news", "the bearer of bad news"},
		{"env MAX_JOBS=2 vllm serve m --max-num-seqs 128", "env MAX_JOBS=2 vllm serve m --max-num-seqs 128"},
		{"vllm serve m --api-key <redacted>", "vllm serve m --api-key <redacted>"},
		{"--tokenizer-mode auto --max-tokens 4", "--tokenizer-mode auto --max-tokens 4"},
		{"llama-server -m m.gguf -api-key sk-1", "llama-server -m m.gguf -api-key <redacted>"},
		{"sglang --api-keys sk-1,sk-2 --port 1", "sglang --api-keys <redacted> --port 1"},
		{"x --middleware-api-key sk-9", "x --middleware-api-key <redacted>"},
		{"--max-num-batched-tokens 8192 --num-api-key-retries 2", "--max-num-batched-tokens 8192 --num-api-key-retries 2"},
		{"x --no-auth --api-key k --port 1", "x --no-auth --api-key <redacted> --port 1"},
		{"ollama run qwen3:8b at http://127.0.0.1:11434/v1", "ollama run qwen3:8b at http://127.0.0.1:11434/v1"},
		{"max_tokens: 4096, tokens=12", "max_tokens: 4096, tokens=12"},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q)\n got  %q\n want %q", tt.in, got, tt.want)
		}
	}
}

// TestKeyByValue: the live key is hidden wherever it stands, also where a
// server's words around it were escaped for the terminal, joined to a
// word, and where a cut left only its start.
func TestKeyByValue(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	r := New(key)
	tests := []struct{ in, want string }{
		{"invalid key " + key, "invalid key <redacted>"},
		{"(" + key + ")", "(<redacted>)"},
		{"--served-as " + key, "--served-as <redacted>"},
		{term.Line("bad:\n" + key + "\t!"), `bad:\n<redacted>\t!`},
		{"cut: " + key[:12] + "… (9 more bytes)", "cut: <redacted>… (9 more bytes)"},
		{"cut: " + key[:10], "cut: <redacted>"},
		{"x" + key + "y", "x<redacted>y"}, // joined to a word, still the key
		{"sk-live-0123 is another", "<redacted> is another"},
	}
	for _, tt := range tests {
		if got := r.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q)\n got  %q\n want %q", tt.in, got, tt.want)
		}
	}
	if w := r.Warning(); w != "" {
		t.Errorf("a long random key warned: %s", w)
	}
}

// TestWeakKeysAreWarnedNotSearched: a key that is short, a word or a
// number cannot be told from names and figures: nothing is rewritten by
// its value, and the warning says why without naming the key.
func TestWeakKeysAreWarnedNotSearched(t *testing.T) {
	text := "vllm 0.11 at github.com/vllm-project/vllm served by matrixgen on :8000, 8000 tok/s, run x-1"
	for _, key := range []string{"vllm", "x", "8000", "matrixgen", "a", "password", "12345678"} {
		r := New(key)
		if got := r.Text(text); got != text {
			t.Errorf("key %q rewrote\n %q\nto\n %q", key, text, got)
		}
		w := r.Warning()
		if Text(w) != w {
			t.Errorf("the warning is itself redacted: %s", Text(w))
		}
		if w == "" {
			t.Errorf("key %q: no warning", key)
		}
		if strings.Contains(w, key) && len(key) > 3 && key != "matrixgen" && key != "password" {
			t.Errorf("key %q: the warning names it: %s", key, w)
		}
	}
}

func TestErrorKeepsItsChain(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	err := fmt.Errorf("probe: HTTP 401: echo Authorization: Bearer %s: %w", key, fs.ErrPermission)
	got := New(key).Error(err)
	if strings.Contains(got.Error(), key) || !errors.Is(got, fs.ErrPermission) {
		t.Errorf("Error: %q, errors.Is %v", got, errors.Is(got, fs.ErrPermission))
	}
}

func TestWithoutUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@github.com/o/r":     "https://github.com/o/r",
		"https://TOKEN@github.com/o/r":         "https://github.com/o/r",
		"https://u:p@ss@github.com/o/r":        "https://github.com/o/r",
		"https://github.com/vllm-project/vllm": "https://github.com/vllm-project/vllm",
	} {
		if got := WithoutUserinfo(in); got != want {
			t.Errorf("WithoutUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

// secretNames are names that say secret, in the spellings launch commands
// and servers use.
var secretNames = []string{"api-key", "api_key", "apikey", "apiKey", "API_KEY", "key", "keys", "api-keys",
	"hf-token", "hf_token", "HF_TOKEN", "token", "auth", "x-auth-token", "authorization", "db-password",
	"password", "passwd", "client-secret", "secret", "credentials", "middleware-api-key", "OPENAI_API_KEY",
	"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "oauth"}

// families place a secret where secrets stand; %[1]s is the name, %[2]s
// the secret.
var families = []string{
	"--%[1]s %[2]s", "--%[1]s=%[2]s", "-%[1]s %[2]s", `--%[1]s "%[2]s"`, `--%[1]s='%[2]s'`,
	"-H '%[1]s: %[2]s'", `-H "%[1]s: Bearer %[2]s"`, `--header "%[1]s: Basic %[2]s"`,
	"%[1]s=%[2]s", `%[1]s="%[2]s"`,
	`'{"%[1]s": "%[2]s", "n": 1}'`, `{"%[1]s":"%[2]s"}`, `{'%[1]s': '%[2]s'}`, `"%[1]s": %[2]s,`,
	"http://h:8000/v1?%[1]s=%[2]s&m=x", "https://h/p?a=1&%[1]s=%[2]s",
	"Authorization: Bearer %[2]s", "echo: Bearer %[2]s.",
	"https://%[2]s@github.com/o/r.git", "https://user:%[2]s@host:8000/v1", "git+ssh://git:%[2]s@h/x",
}

// harmless are words, names, figures and flags no redaction may change.
var harmless = []string{"vllm", "serve", "matrixgen", "sglang", "llama.cpp", "github.com/vllm-project/vllm",
	"--max-num-batched-tokens 8192", "--tokenizer-mode auto", "--num-api-key-retries 2", "--max-tokens 4",
	"max_tokens: 4096", "8000", "http://127.0.0.1:8000/v1", "qwen3:8b", "the bearer of", "--port 8000",
	"MAX_JOBS=2", "--kv-cache-dtype fp8", "tokens=12", "Qwen/Qwen3-8B", "2026-01-02T03:04:05Z", "12.5 tok/s",
	"HTTP 500:", "internal error", "x", "a", "(", ")", ",", "Ollama", "--served-model-name m", "model=m", "--no-auth"}

// randomSecret is a key of 10 to 40 characters from alphabet, starting
// with a letter or digit.
func randomSecret(rng *rand.Rand, alphabet string) string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := []byte{alnum[rng.IntN(len(alnum))]}
	for n := 10 + rng.IntN(31); len(b) < n; {
		b = append(b, alphabet[rng.IntN(len(alphabet))])
	}
	return string(b)
}

func randomText(rng *rand.Rand, words int) []string {
	out := make([]string, words)
	for i := range out {
		out[i] = harmless[rng.IntN(len(harmless))]
	}
	return out
}

// TestGeneratedSecretsNeverSurvive places random secrets in every family,
// under every secret name, at random positions of random text, and asks
// that none survives, with or without the live key known; and that text
// of names and figures alone comes out as it went in.
func TestGeneratedSecretsNeverSurvive(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	const keyChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~+/="
	for i := range 4000 {
		family := families[rng.IntN(len(families))]
		alphabet := keyChars
		if strings.Contains(family, "://") && strings.Contains(family, "@") {
			// A password may hold '@' and ':', not an unescaped '/'.
			alphabet = strings.ReplaceAll(alphabet, "/", "") + "@:!$"
		}
		if strings.Contains(family, "?") {
			alphabet = strings.ReplaceAll(alphabet, "=", "") // a query value is escaped
		}
		secret := randomSecret(rng, alphabet)
		name := secretNames[rng.IntN(len(secretNames))]
		placed := fmt.Sprintf(family, name, secret)
		words := randomText(rng, rng.IntN(12))
		at := rng.IntN(len(words) + 1)
		text := strings.Join(append(append(words[:at:at], placed), words[at:]...), " ")
		for _, r := range []*Redactor{New(""), New("vllm"), New(secret)} {
			got := r.Text(text)
			if strings.Contains(got, secret) {
				t.Fatalf("case %d: the secret survived\n in:  %q\n out: %q", i, text, got)
			}
			if again := r.Text(got); again != got {
				t.Fatalf("case %d: redacting twice changed %q to %q", i, got, again)
			}
		}
		plain := strings.Join(randomText(rng, 1+rng.IntN(12)), " ")
		for _, key := range []string{"", "vllm", "x", "8000", "matrixgen", secret} {
			if got := New(key).Text(plain); got != plain {
				t.Fatalf("case %d: key %q rewrote names and figures\n in:  %q\n out: %q", i, key, plain, got)
			}
		}
	}
}

// TestGeneratedLiveKeyNeverSurvives puts the live key, as a whole token,
// at random positions of random text, around random separators, also
// escaped for a terminal and cut at random lengths: neither it nor the
// start a cut leaves of it survives.
func TestGeneratedLiveKeyNeverSurvives(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	seps := []string{" ", "\n", "\t", "(", ")", "'", `"`, "=", ":", ",", "/", "\x1b[0m", "…", ""}
	for i := range 4000 {
		key := randomSecret(rng, "abcdefghijklmnopqrstuvwxyz0123456789-_")
		if weakness(key) != "" {
			continue // TestWeakKeysAreWarnedNotSearched
		}
		words := randomText(rng, rng.IntN(10))
		at := rng.IntN(len(words) + 1)
		before, after := seps[rng.IntN(len(seps))], seps[rng.IntN(len(seps))]
		// No separator only at an end of the text.
		if before == "" && at > 0 {
			before = " "
		}
		if after == "" && at < len(words) {
			after = " "
		}
		text := strings.Join(words[:at], " ") + before + key + after + strings.Join(words[at:], " ")
		if rng.IntN(2) == 0 {
			text = term.Line(text)
		}
		r := New(key)
		if got := r.Text(text); strings.Contains(got, key) {
			t.Fatalf("case %d: the key survived\n in:  %q\n out: %q", i, text, got)
		}
		// A cut anywhere in the key leaves its start: at least half of it
		// (or 8 bytes) must not survive.
		start := strings.Index(text, key)
		cut := start + len(key)/2 + rng.IntN(len(key)-len(key)/2)
		got := r.Text(text[:cut] + "… (more)")
		// Digits alone are a figure the key shares, and kept (key.go).
		if head := key[:min(8, len(key)/2)]; strings.Contains(got, head) && strings.Trim(head, "0123456789") != "" {
			t.Fatalf("case %d: the start of a cut key survived\n in:  %q\n out: %q", i, text[:cut], got)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("vllm serve m", "sk-0123456789", 0, 0, uint8(0))
	f.Add("--port 8000 --max-tokens 4", "hf_abcdefghij12", 3, 1, uint8(5))
	f.Add("", "ghp_0123456789abc", 18, 0, uint8(7))
	f.Fuzz(func(t *testing.T, text, secret string, family, name int, where uint8) {
		family = abs(family) % len(families)
		// A secret of a token's characters (RFC 6750's b64token), as keys
		// are; a URL's password without '/', which a URL cannot hold.
		chars := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/="
		if strings.Contains(families[family], "@") {
			chars = strings.ReplaceAll(chars, "/", "")
		}
		if len(secret) < 10 || len(secret) > 64 || strings.Trim(secret, chars) != "" || !isAlnum(secret[0]) ||
			strings.Contains(text, secret) || strings.ContainsAny(text, "\"'") {
			return
		}
		name = abs(name) % len(secretNames)
		placed := fmt.Sprintf(families[family], secretNames[name], secret)
		at := int(where) % (len(text) + 1)
		// The placed secret starts a token of its own, as it does in a
		// command or a message.
		in := text[:at] + " " + placed + " " + text[at:]
		for _, r := range []*Redactor{New(""), New(secret)} {
			out := r.Text(in)
			if strings.Contains(out, secret) {
				t.Fatalf("the secret survived\n in:  %q\n out: %q", in, out)
			}
			if again := r.Text(out); again != out {
				t.Fatalf("redacting twice changed %q to %q", out, again)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n = -n; n < 0 {
			return 0
		}
	}
	return n
}

// BenchmarkText measures the redaction of a server's 64 KB error body, the
// longest text a run redacts at once, with the live key in it.
func BenchmarkText(b *testing.B) {
	const key = "sk-live-0123456789abcdef"
	text := strings.Repeat("internal error at --port 8000 (max_tokens: 4096) ", 64<<10/50) + "Authorization: Bearer " + key
	r := New(key)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if strings.Contains(r.Text(text), key) {
			b.Fatal("the key survived")
		}
	}
}

// TestRandomLetterKeysAreSearched: a key of random letters in both cases,
// as long as a real key, is no word: it is hidden by its value wherever it
// stands (a 32-letter key was left unsearched, and a server's echo of it
// printed raw), while words of one case stay weak.
func TestRandomLetterKeysAreSearched(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for range 200 {
		key := make([]byte, strongLetters+rng.IntN(32))
		for i := range key {
			key[i] = letters[rng.IntN(len(letters))]
		}
		key[0], key[1] = 'a', 'Z' // both cases, whatever the draw
		r := New(string(key))
		if w := r.Warning(); w != "" {
			t.Errorf("%s: %s", key, w)
		}
		if got := r.Text("boom user=" + string(key) + " ok"); strings.Contains(got, string(key)) {
			t.Errorf("%s: kept in %q", key, got)
		}
	}
	for _, word := range []string{"internationalization", "SECRETSECRETSECRET", "Password"} {
		if New(word).Warning() == "" {
			t.Errorf("%q is not warned about", word)
		}
	}
}

// TestSecretWordsAnywhereInAName: an attack found secrets whose word was
// not the last part of the name, or a word the list lacked; a count beside
// a secret's word stays a count.
func TestSecretWordsAnywhereInAName(t *testing.T) {
	const secret = "Zq7vLm2Xc9Rt"
	for _, form := range []string{
		"curl -u admin:%s http://x", "curl --user admin:%s", "--passphrase %s", "--pass %s", "--jwt %s",
		"--secret-value %s", "--key-value %s", "--tokenValue %s", "GITHUB_PAT=%s", "https://x.blob/c?sv=1&sig=%s",
		"X-Amz-Signature=%s", "Cookie: a=1; session=%s", "--api-key=%s --port 8000",
		"Location: https://app/cb#access_token=%s&x=1", `OPENAI_API_KEY = "%s"`,
	} {
		in := fmt.Sprintf(form, secret)
		if got := Text(in); strings.Contains(got, secret) {
			t.Errorf("%q kept the secret: %q", in, got)
		}
	}
	for _, kept := range []string{"--num-api-key-retries 2", "--max-num-batched-tokens 8192", "--tokenizer-mode auto", "python -u serve.py", "--session-count 4"} {
		if got := Text(kept); got != kept {
			t.Errorf("%q became %q", kept, got)
		}
	}
}

// TestAlso: the secrets a person gave are hidden wherever they stand as a
// whole token, the Redactor they came from is left as it was, and a value
// too short to tell from words is not looked for.
func TestAlso(t *testing.T) {
	base := New("")
	r := base.Also("#Tr0ub4dor&3", "hunter2horse", "abc")
	got := r.Text("input: '#Tr0ub4dor&3', then hunter2horse; abc stays, hunter2horses too")
	if want := "input: '" + Mark + "', then " + Mark + "; abc stays, hunter2horses too"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if base.Text("hunter2horse") != "hunter2horse" {
		t.Error("Also changed the Redactor it came from")
	}
}
