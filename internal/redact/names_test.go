package redact

import (
	"strings"
	"testing"
)

// TestNamesLayoutsAndHeaders: secrets an attacker found kept, each by a
// mechanism: a credential header's scheme the field rule did not know, a
// cookie after the first, an assignment passed as a flag's value, a name
// whose secret word has an unknown part after it or a qualifier not
// listed, a typographic dash, a flag's value on its next line or quoted
// apart.
func TestNamesLayoutsAndHeaders(t *testing.T) {
	tests := []struct{ name, in, secret string }{
		{"auth scheme Key", "Authorization: Key hunter2hunter2", "hunter2hunter2"},
		{"auth scheme OAuth", "Authorization: OAuth hunter2hunter2", "hunter2hunter2"},
		{"auth scheme Api-Key", "Authorization: Api-Key hunter2hunter2", "hunter2hunter2"},
		{"auth SharedKey", "Authorization: SharedKey acct:hunter2hunter2", "hunter2hunter2"},
		{"auth Bearer colon", "Authorization: Bearer: hunter2hunter2", "hunter2hunter2"},
		{"cookie second", "Cookie: lang=en; SSO=hunter2hunter2", "hunter2hunter2"},
		{"docker --env=", "docker run --env=HF_TOKEN=hunter2hunter2 img", "hunter2hunter2"},
		{"docker -e=", "docker run -e=VLLM_API_KEY=hunter2hunter2 img", "hunter2hunter2"},
		{"kubectl literal", "kubectl create secret generic x --from-literal=HF_TOKEN=hunter2hunter2", "hunter2hunter2"},
		{"trailing part -2", "vllm serve m --api-key-2 hunter2hunter2", "hunter2hunter2"},
		{"trailing part primary", "vllm serve m --api-key-primary hunter2hunter2", "hunter2hunter2"},
		{"auth-header", "x --auth-header 'Key hunter2hunter2'", "hunter2hunter2"},
		{"private-key-pem", "x --private-key-pem hunter2hunter2", "hunter2hunter2"},
		{"unknown qualifier", "WANDB_KEY=hunter2hunter2 NGC_KEY=hunter2hunter2 vllm serve m", "hunter2hunter2"},
		{"b2 key", "B2_APPLICATION_KEY=hunter2hunter2", "hunter2hunter2"},
		{"joined key", "x --secretkey hunter2hunter2", "hunter2hunter2"},
		{"otp", "x --otp 123456", "123456"},
		{"pgpassword", "PGPASSWORD=hunter2hunter2 psql", "hunter2hunter2"},
		{"jsessionid", "Cookie: JSESSIONID=hunter2hunter2", "hunter2hunter2"},
		{"em dash flag", "vllm serve m —api-key hunter2hunter2", "hunter2hunter2"},
		{"en dash flag", "vllm serve m –-api-key hunter2hunter2", "hunter2hunter2"},
		{"yaml args list", "args:\n  - --api-key\n  - hunter2hunter2", "hunter2hunter2"},
		{"json args multiline", "[\n  \"--api-key\",\n  \"hunter2hunter2\"\n]", "hunter2hunter2"},
		{"newline value", "--api-key\nhunter2hunter2", "hunter2hunter2"},
		{"quoted args", `vllm serve m "--api-key" "hunter2hunter2"`, "hunter2hunter2"},
		{"python environ", "os.environ['HF_TOKEN'] = 'hunter2hunter2'", "hunter2hunter2"},
		{"40-hex token", "--env=GITHUB_TOKEN=0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New("").Text(tt.in); strings.Contains(got, tt.secret) {
				t.Errorf("kept %q: %q -> %q", tt.secret, tt.in, got)
			}
		})
	}
}

// TestDigestsAndKeysOfWordsKeepCommands: a model's path named by its
// digest, and a command read with a live key made of words
// (token-abc123, as vLLM's documentation has it), are kept whole.
func TestDigestsAndKeysOfWordsKeepCommands(t *testing.T) {
	tests := []struct{ name, key, in string }{
		{"ollama blob", "", "llama-server -m /usr/share/ollama/.ollama/models/blobs/sha256-6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa -c 8192"},
		{"hf blob", "", "vllm serve /root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/blobs/6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa"},
		{"docs key token-abc123", "token-abc123", "vllm serve m --long-prefill-token-threshold 2048 --return-tokens-as-token-ids"},
		{"key of model words", "Qwen3-8B-key", "vllm serve Qwen/Qwen3-8B --served-model-name qwen3-8b"},
		{"key of flag words", "fp8-kv-cache-1", "vllm serve m --kv-cache-dtype fp8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.key).Text(tt.in); got != tt.in {
				t.Errorf("altered: %q -> %q", tt.in, got)
			}
		})
	}
}

// TestEngineFlagsKept: the engines' own flags whose names hold a secret's
// word (token, key, session, cert) with the values they take are kept as
// written: a launch command is published with secrets hidden and nothing
// else altered.
func TestEngineFlagsKept(t *testing.T) {
	for _, in := range []string{
		"vllm serve m --long-prefill-token-threshold 2048 --max-num-batched-tokens 8192 --tokenizer-pool-size 0",
		"vllm serve m --kv-cache-dtype fp8 --ssl-keyfile /etc/ssl/key.pem --ssl-certfile /etc/ssl/cert.pem --ssl-cert-reqs 0",
		"vllm serve m --return-tokens-as-token-ids --enable-prompt-tokens-details --tokenizer-revision main",
		"vllm serve m --api-key-file /run/secrets/key --auth-mode none --token-cache-size 4096 --session-count 4",
		"python -m sglang.launch_server --tokenizer-path /m --skip-tokenizer-init --max-total-tokens 100000",
		"llama-server -m /models/q.gguf --ssl-key-file /k.pem --ssl-cert-file /c.pem --cache-type-k q8_0 --slot-save-path /s",
		"text-generation-launcher --max-batch-total-tokens 16000 --max-input-tokens 4000 --tokenizer-config-path /t.json",
		"OLLAMA_KEEP_ALIVE=5m OLLAMA_NUM_PARALLEL=4 ollama serve",
		"HF_TOKEN_PATH=/root/.cache/token vllm serve m --api-key-env VLLM_KEY",
		"vllm serve m --num-api-key-retries 2 --secret-name vllm-keys --auth-type bearer",
		"router --session-affinity true --token-streaming off --cookie-secure auto",
	} {
		if got := Text(in); got != in {
			t.Errorf("altered:\n in:  %q\n out: %q", in, got)
		}
	}
}

// TestSecretNamesInEveryForm: a name that says secret hides its value in
// each way a command, a header, a file or a URL writes it.
func TestSecretNamesInEveryForm(t *testing.T) {
	names := []string{"api-key", "api-key-2", "api-key-primary", "auth-header", "private-key-pem", "otp", "totp", "bearer-token",
		"session-cookie", "client-key", "priv-key", "tls-key", "pw", "passcode", "secretkey", "accesskey", "PGPASSWORD",
		"JSESSIONID", "WANDB_KEY", "NGC_KEY", "AZURE_KEY", "GCP_SA_KEY", "B2_APPLICATION_KEY", "ANTHROPIC_API_KEY", "hf-token",
		"X-Api-Key", "Proxy-Authorization", "Cookie", "MINIO_ROOT_PASSWORD", "jwt-key", "mnemonic", "vault-token"}
	for _, name := range names {
		for _, value := range []string{"hunter2hunter2", "CorrectHorse9"} {
			dash := strings.ReplaceAll(strings.ToLower(name), "_", "-")
			upper := strings.ToUpper(strings.ReplaceAll(dash, "-", "_"))
			for _, in := range []string{
				"vllm serve m --" + dash + "=" + value + " --port 8000",
				"vllm serve m --" + dash + " " + value + " --port 8000",
				"vllm serve m --" + dash + " '" + value + "' --port 8000",
				"vllm serve m \u2014" + dash + " " + value,
				"vllm serve m \"--" + dash + "\" \"" + value + "\"",
				"args:\n  - --" + dash + "\n  - " + value,
				upper + "=" + value + " vllm serve m",
				"docker run --env=" + upper + "=" + value + " vllm/vllm-openai",
				"curl -H '" + name + ": " + value + "' http://h/v1",
				`{"` + name + `": "` + value + `", "n": 1}`,
				name + ": " + value + "\nport: 8000",
				"https://h/x?" + strings.ReplaceAll(dash, "-", "_") + "=" + value + "&b=1",
			} {
				if got := Text(in); strings.Contains(got, value) {
					t.Errorf("kept %q:\n in:  %q\n out: %q", value, in, got)
				}
			}
		}
	}
}

// TestServerOutputKept: what engines print of themselves, which reaches a
// run as a reason or a probe's text, is kept where it holds no secret,
// and hidden where it does (found by an attacker over ~300 real flags
// and their logs).
func TestServerOutputKept(t *testing.T) {
	for _, in := range []string{
		"VLLM_TOOL_PARSE_REGEX_TIMEOUT_SECONDS=1 VLLM_USE_TRTLLM_RAGGED_DEEPSEEK_PREFILL=1 vllm serve m",
		"vllm serve m --speculative-accept-threshold-single 0.3 --checkpoint-engine-wait-weights-before-ready",
		"python -m sglang.launch_server --speculative-token-map thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt --bucket-inter-token-latency '0.002 0.005'",
		"llama-server -m q.gguf --override-kv tokenizer.ggml.add_bos_token=bool:false",
		"Prefill batch. #new-token: 20, #cached-token: 0, token usage: 0.00",
		`{"bos_token":"<|endoftext|>","timings_per_token":false,"has_next_token":true}`,
		"server_args=ServerArgs(api_key=None, admin_api_key=None, enable_streaming_session=False, kt_max_deferred_experts_per_token=None)",
		"non-default args: {'hf_token': True}",
		"HF_HUB_DISABLE_IMPLICIT_TOKEN=1 LLAMA_ARG_CORS_CREDENTIALS=false vllm serve m",
		"docker login -u '$oauthtoken' --password-stdin nvcr.io",
		"401: give --api-key <redacted> with every request and try again",
		`{"id":"modelperm-8f3a2b1c9d4e4f5a8b7c6d5e4f3a2b1c","object":"model_permission"}`,
		"Args { api_key: None, ngrok_authtoken: None, max_input_tokens: Some(4000) }",
		`docker run --env "HUGGING_FACE_HUB_TOKEN=$HF_TOKEN" vllm/vllm-openai --api-key ${VLLM_API_KEY}`,
	} {
		if got := Text(in); got != in {
			t.Errorf("altered:\n in:  %q\n out: %q", in, got)
		}
	}
	for _, in := range []string{
		`Args { api_key: Some("hunter2hunter2"), hostname: "0.0.0.0" }`,
		"Args {\n    api_key: Some(\n        \"hunter2hunter2\",\n    ),\n}",
		"python train.py --use-auth-token hunter2hunter2",
		"llama-server -hft hunter2hunter2 -m q.gguf",
		"vllm serve m --token-value 31415926535897",
		"vllm serve m --api-key $hunter2hunter2",
		"vllm serve m --api-key k1k1k1k1 hunter2hunter2 --port 8000",
		"non-default args: {'model': 'm', 'api_key': ['k1k1k1k1', 'hunter2hunter2'], 'port': 8000}",
	} {
		if got := Text(in); strings.Contains(got, "hunter2") || strings.Contains(got, "31415926535897") {
			t.Errorf("kept:\n in:  %q\n out: %q", in, got)
		}
	}
	// A live key a person chose of words hides itself, not the words it
	// shares with a command.
	if in, got := "python benchmarks/benchmark_serving.py --model deepseek-ai/DeepSeek-R1", New("sk-vllm-benchmark-local").Text("python benchmarks/benchmark_serving.py --model deepseek-ai/DeepSeek-R1"); got != in {
		t.Errorf("a key of words altered %q to %q", in, got)
	}
}

// TestOneValueFlagKeepsTheNextWord: a password or a token flag takes one
// value, and the bare word after it is the command's (a registry, a
// host): it was hidden as a second key, as vLLM's --api-key k1 k2 is.
func TestOneValueFlagKeepsTheNextWord(t *testing.T) {
	for _, in := range []string{
		"docker login --password hunter2hunter2 ghcr.io",
		"docker login --username u --password hunter2hunter2 registry.example.com",
		"tool --token hunter2hunter2 serve",
		`["docker", "login", "--password", "hunter2hunter2", "ghcr.io"]`,
	} {
		got := Text(in)
		if strings.Contains(got, "hunter2") {
			t.Errorf("kept the secret: %q", got)
		}
		last := strings.Trim(in[strings.LastIndex(in, " ")+1:], `"]`)
		if !strings.Contains(got, last) {
			t.Errorf("hid %q as a secret:\n in:  %q\n out: %q", last, in, got)
		}
	}
}

// TestUserFlagReadsUserAndPassword: a user's flag (curl -u) hides what
// follows the colon of user:password and nothing else, quoted whole or
// quoted after the colon, whose quotes are the command's. What follows the
// first colon is hidden even where it reads as a URL's: curl takes it as
// the password, and a password may begin "//".
func TestUserFlagReadsUserAndPassword(t *testing.T) {
	for in, want := range map[string]string{
		"curl -u https://example.com/v1/models":               "curl -u https:" + Mark,
		"curl --user alice://hunter2hunter2 https://x":        "curl --user alice:" + Mark + " https://x",
		"curl -u 'alice:hunter2hunter2' https://example.com":  "curl -u 'alice:" + Mark + "' https://example.com",
		`curl -u "alice:hunter2hunter2" https://example.com`:  `curl -u "alice:` + Mark + `" https://example.com`,
		"curl -u alice:hunter2hunter2 https://example.com":    "curl -u alice:" + Mark + " https://example.com",
		"curl -u admin:'S3cr3t!pass' https://example.com":     "curl -u admin:'" + Mark + "' https://example.com",
		`curl -u alice:"hunter2 hunter3" https://example.com`: `curl -u alice:"` + Mark + `" https://example.com`,
		"curl --user=alice:'hunter2 hunter3' https://x":       "curl --user=alice:'" + Mark + "' https://x",
		"vllm serve m --apikey k1abcdefgh1 k2abcdefgh2":       "vllm serve m --apikey " + Mark + " " + Mark,
		"curl -u https://alice:hunter2hunter2@example.com/":   "curl -u https:" + Mark,
	} {
		if got := Text(in); got != want {
			t.Errorf("\n in:   %q\n out:  %q\n want: %q", in, got, want)
		}
	}
}

// TestColonEndsAValue: a colon after a value ends the clause, as in an
// error that quotes a server's reply and goes on; it is the text's, not
// the secret's.
func TestColonEndsAValue(t *testing.T) {
	for in, want := range map[string]string{
		"401: got key: Bearer sk-abc123456: the server refused": "401: got key: Bearer " + Mark + ": the server refused",
		"refused Bearer sk-abc123456: try another":              "refused Bearer " + Mark + ": try another",
		"token: abc:def123 now":                                 "token: " + Mark + " now",
	} {
		if got := Text(in); got != want {
			t.Errorf("\n in:   %q\n out:  %q\n want: %q", in, got, want)
		}
	}
}
