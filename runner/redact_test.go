package runner

import "testing"

func TestRedactCommand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"vllm serve m --api-key sk-123 --port 8000", "vllm serve m --api-key <redacted> --port 8000"},
		{"vllm serve m --api-key=sk-123", "vllm serve m --api-key=<redacted>"},
		{`vllm serve m --api-key "a b c"`, "vllm serve m --api-key <redacted>"},
		{"huggingface-cli download m --token hf_abc", "huggingface-cli download m --token <redacted>"},
		{"x --hf-token hf_abc --hf-token=hf_def", "x --hf-token <redacted> --hf-token=<redacted>"},
		{"HF_TOKEN=hf_abc OPENAI_API_KEY=sk-1 AWS_SECRET=s vllm serve", "HF_TOKEN=<redacted> OPENAI_API_KEY=<redacted> AWS_SECRET=<redacted> vllm serve"},
		{`curl -H "Authorization: Bearer sk-123" http://x`, `curl -H "Authorization: Bearer <redacted>" http://x`},
		{"env MAX_JOBS=2 vllm serve m --max-num-seqs 128", "env MAX_JOBS=2 vllm serve m --max-num-seqs 128"},
		{"vllm serve m --api-key <redacted>", "vllm serve m --api-key <redacted>"},
		{"--tokenizer-mode auto --max-tokens 4", "--tokenizer-mode auto --max-tokens 4"},
		{"llama-server -m m.gguf -api-key sk-1", "llama-server -m m.gguf -api-key <redacted>"},
		{"sglang --api-keys sk-1,sk-2 --port 1", "sglang --api-keys <redacted> --port 1"},
		{"x --middleware-api-key sk-9", "x --middleware-api-key <redacted>"},
		{"curl https://user:pa55@host:8000/v1 -X", "curl https://user:<redacted>@host:8000/v1 -X"},
		{"--max-num-batched-tokens 8192 --num-api-key-retries 2", "--max-num-batched-tokens 8192 --num-api-key-retries 2"},
	}
	for _, tt := range tests {
		if got := RedactCommand(tt.in); got != tt.want {
			t.Errorf("RedactCommand(%q)\n got  %q\n want %q", tt.in, got, tt.want)
		}
	}
}
