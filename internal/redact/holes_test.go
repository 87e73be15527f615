package redact

import (
	"fmt"
	"strings"
	"testing"
)

// A live key of the shape providers issue, strong enough to be searched by
// its value.
const liveKey = "sk-Zq7vLm2Xc9Rt4WbN8kP3yH6d"

// TestHoles: each family an attack found kept its secret; secret is the
// part that must not survive.
func TestHoles(t *testing.T) {
	sig := "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
	tests := []struct {
		name, in, secret string
	}{
		{"sigv4 header", "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig, sig},
		{"sigv4 header credential", "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig, "AKIAIOSFODNN7EXAMPLE"},
		{"sigv4 url", "GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=" + sig, sig},
		{"sigv4 url credential", "GET https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101&X-Amz-Signature=" + sig, "AKIAIOSFODNN7EXAMPLE"},
		{"quoted in pieces", "vllm serve m --api-key 'Zq7vLm''2Xc9Rt4W' --port 8000", "2Xc9Rt4W"},
		{"quoted in two kinds", `vllm serve m --api-key "Zq7vLm"'2Xc9Rt4W' --port 8000`, "2Xc9Rt4W"},
		{"dash first", "vllm serve m --api-key -Zq7vLm2Xc9Rt4W --port 8000", "Zq7vLm2Xc9Rt4W"},
		{"ansi-c", `vllm serve m --api-key $'Zq7vLm\x412Xc9Rt4W' --port 8000`, "2Xc9Rt4W"},
		{"escaped json", `x --override "{\"api_key\": \"Zq7vLm2Xc9Rt4W\", \"n\": 1}"`, "Zq7vLm2Xc9Rt4W"},
		{"ruby", `config = {'api_key' => 'Zq7vLm2Xc9Rt4W'}`, "Zq7vLm2Xc9Rt4W"},
		{"ruby symbol", `{:api_key => "Zq7vLm2Xc9Rt4W"}`, "Zq7vLm2Xc9Rt4W"},
		{"xml", `<config><password>Zq7vLm2Xc9Rt4W</password></config>`, "Zq7vLm2Xc9Rt4W"},
		{"xml dashed", `<api-key>Zq7vLm2Xc9Rt4W</api-key>`, "Zq7vLm2Xc9Rt4W"},
		{"url-encoded assignment", "GET /v1?q=api_key%3DZq7vLm2Xc9Rt4W", "Zq7vLm2Xc9Rt4W"},
		{"url-encoded json", "body=%7B%22token%22%3A%22Zq7vLm2Xc9Rt4W%22%7D", "Zq7vLm2Xc9Rt4W"},
		{"nbsp", "vllm serve m --api-key\u00a0Zq7vLm2X --port 8000", "Zq7vLm2X"},
		{"ideographic space", "vllm serve m --api-key\u3000Zq7vLm2X --port 8000", "Zq7vLm2X"},
		{"em space header", "Authorization:\u2003Bearer\u2003Zq7vLm2X", "Zq7vLm2X"},
		{"go header map", "request headers map[Accept:[*/*] Authorization:[Bearer Zq7vLm2X]]", "Zq7vLm2X"},
		{"json header map", `{"Authorization":["Bearer Zq7vLm2X"]}`, "Zq7vLm2X"},
		{"go header literal", `http.Header{"X-Api-Key":[]string{"Zq7vLm2X"}}`, "Zq7vLm2X"},
		{"scheme-relative", "see //admin:Zq7vLm2X@db.internal:5432/x", "Zq7vLm2X"},
		{"userinfo with @", "git clone https://bot:Zq7@vLm2X@github.com/o/r", "vLm2X"},
		{"userinfo with @ encoded", "git clone https://bot:Zq7%40vLm2X@github.com/o/r", "vLm2X"},
		{"line continuation", "vllm serve m --api-key \\\n hunter2hunter2 --port 8000", "hunter2"},
		{"line continuation glued", "vllm serve m --api-key\\\n  hunter2hunter2", "hunter2"},
		{"name with a digit", "DB_PASSWORD1=hunter2hunter2", "hunter2"},
		{"yaml next line", "auth:\n  password:\n    s3cr3t!Pw\n  user: x", "s3cr3t"},
		{"yaml block", "api_key: |\n  s3cr3tZq7v\nport: 8000", "s3cr3t"},
		{"powershell env", `$env:VLLM_API_KEY="hunter2hunter2"`, "hunter2"},
		{"k8s env entry", `{"name":"API_KEY","value":"hunter2hunter2"}`, "hunter2"},
		{"k8s env entry yaml", "- name: VLLM_API_KEY\n  value: hunter2hunter2", "hunter2"},
		{"form without percent", "vllm+serve+m+--api-key+hunter2hunter2+--port+8000", "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New("").Text(tt.in); strings.Contains(got, tt.secret) {
				t.Errorf("kept %q:\n in:  %q\n out: %q", tt.secret, tt.in, got)
			}
		})
	}
}

// TestLiveKeyPieces: pieces of the live key a cut or a neighbour left.
func TestLiveKeyPieces(t *testing.T) {
	tests := []struct{ name, in, piece string }{
		{"head cut after 7", "error: invalid key " + liveKey[:7], liveKey[:7]},
		{"head cut after 7 with marker", "error: invalid key " + liveKey[:7] + "…", liveKey[:7]},
		{"tail only", liveKey[12:] + " is not a valid key", liveKey[12:]},
		{"tail after marker", "…" + liveKey[14:] + "\"}", liveKey[14:]},
		{"touching a letter", "x" + liveKey + " bad", liveKey[1:]},
		{"touching letters both sides", "key" + liveKey[3:] + "def", liveKey[3:]},
		{"middle piece", "got ..." + liveKey[5:15] + "...", liveKey[5:15]},
		{"soft hyphen and zero-width", "got " + liveKey[:9] + "\u00ad" + liveKey[9:15] + "\u200b" + liveKey[15:20] + "\u034f" + liveKey[20:] + " ok", liveKey[9:15]},
		{"ansi inside", "got " + liveKey[:9] + "\x1b[0m" + liveKey[9:16] + "\x1b[1m" + liveKey[16:] + " ok", liveKey[9:16]},
	}
	r := New(liveKey)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Text(tt.in); strings.Contains(got, tt.piece) {
				t.Errorf("kept %q:\n in:  %q\n out: %q", tt.piece, tt.in, got)
			}
		})
	}
}

// TestPasswordLetters: a one-letter flag that takes a password for its
// command only (docker login -p, sshpass -p, mysql -pX, redis-cli -a, …)
// hid nothing; for every other command the letter means something else
// and its value is kept. The forms are an attacker's: after a path, a
// quote or bash -c, joined to the letter, in pieces of quotes; the kept
// ones are ssh's port after sshpass, a container named login or mysql.
func TestPasswordLetters(t *testing.T) {
	for _, secret := range []string{"dckr_pat_Zq7vLm2Xc9Rt4W", "hunter2hunter2", "Zq7!vLm@2Xc"} {
		for _, form := range []string{
			"docker login -u me -p %s",
			"docker login -u me -p %s && docker run -p 8000:8000 vllm/vllm-openai",
			"sudo docker login ghcr.io -u me -p '%s'; vllm serve m",
			"podman login quay.io --username me -p=%s",
			"docker --config /c login -p \"%s\" registry.example.com",
			"docker login -u me -p%s ghcr.io",
			"/usr/bin/docker login -u me -p %s",
			"bash -c \"docker login -u me -p %s\"",
			"cmd /c \"docker.exe login -u me -p %s\"",
			"\t@docker login -u $(U) -p %s",
			"helm registry login r.io -u me -p %s",
			"az acr login -n reg -u me -p %s",
			"crane auth login r.io -u me -p %s",
			"(sshpass -p %s ssh gpu-box vllm serve m)",
			"sshpass -p%s ssh gpu-box",
			"rsync -avz --rsh=\"sshpass -p %s ssh -l me\" src/ box:/dst",
			"GIT_SSH_COMMAND=\"sshpass -p %s ssh\" git pull",
			"mysql -uroot -p%s -h db",
			"docker exec db sh -c \"mysql -uroot -p%s db < /dump.sql\"",
			"mysqlsh -uroot -p%s",
			"mariadb -h db -u root -p%s",
			"mongosh -u admin -p %s",
			"cqlsh -u u -p %s",
			"redis-cli -h cache -a %s ping",
			"watch -n1 \"valkey-cli -a %s info\"",
			"twine upload -u me -p %s dist/*",
			"zip -P %s out.zip a",
			"7z x -p%s a.7z",
			"echo ok; oras login -u me -p %s ghcr.io | tee log",
			"docker login  -p %s",
			"docker login \\\n  -u me \\\n  -p %s \\\n  ghcr.io",
			"docker login -u me \\\n-p %s",
			"sshpass  -p %s ssh box",
			"sudo -E docker login -u me -p %s",
			"kubectl exec -it mysql-0 -- mysql -uroot -p%s",
			"kubectl exec deploy/redis -- redis-cli -a %s ping",
			"srun -N1 --gres=gpu:1 docker login -u me -p %s",
			"/usr/bin/time -v mysql -uroot -p%s",
			"script:\n  - docker login -u me -p %s ghcr.io",
			"\t-docker login -u me -p %s",
			"mysqladmin ping -h localhost -uroot -p%s",
			"mysql -e \"SELECT 1\" -uroot -p%s",
			"7z x a.7z -p%s",
			"unrar x a.rar -p%s",
			"rar a -hp%s a.rar f",
			"cqlsh 10.0.0.5 9042 -u cassandra -p %s",
			"twine upload dist/* -u __token__ -p %s",
			"mongosh \"mongodb://db:27017\" -u admin -p %s",
			"regctl registry login r.io -u me -p %s",
			"sqlcmd -Q \"select 1\" -S db -U sa -P %s",
			"redis-cli -h h\t-a %s",
		} {
			for _, in := range append([]string{fmt.Sprintf(form, secret)}, listForms(form, secret)...) {
				if got := Text(in); strings.Contains(got, secret) || strings.Contains(got, secret[4:]) {
					t.Errorf("kept the password:\n in:  %q\n out: %q", in, got)
				}
			}
		}
	}
	for _, in := range []string{
		"mysql -uroot -p\"Zq7v\"Lm2Xc9 db",
		"sshpass -p'Zq7v'Lm2Xc9 ssh box",
		"mysql -uroot -pZq7v\"Lm2Xc9\" db",
	} {
		if got := Text(in); strings.Contains(got, "Lm2Xc9") {
			t.Errorf("kept a piece of the password:\n in:  %q\n out: %q", in, got)
		}
	}
	for _, in := range []string{
		"docker run -p 8000:8000 -p 8001:8001 vllm/vllm-openai --model m",
		"llama-server -m /m.gguf -p 'Hello world' --port 8080",
		"vllm serve m -p 8000 --host 0.0.0.0",
		"docker run -p 8000:8000 img login",
		"docker run --gpus all --name login -p 8000:8000 vllm/vllm-openai --model m",
		"docker run -d --name login-proxy -p 8080:80 nginx",
		"docker compose -f login.yml -p myproj up -d",
		"docker run -d --name mysql -p3306:3306 mysql:8",
		"llama-server -m mysql-coder.gguf -p\"Write SQL\" --port 8080",
		"docker run --name sshpass-box -p 2222:22 img",
		"sshpass -f ~/.pw ssh -p 2222 gpu-box 'vllm serve m --port 8000'",
		"sshpass -e ssh -p 2222 gpu-box",
		"sshpass -f pw ssh gpu-box docker run -p 8000:8000 vllm/vllm-openai",
		"sshpass -f pw rsync -e 'ssh -p 2222' a box:/b",
		"docker login -u me --password-stdin < pw.txt; llama-server -p hi",
		"docker login -u me -p $DOCKER_PASSWORD ghcr.io",
		"sshpass -P assword: -f /run/pw ssh box",
		"mysql -uroot -p db",
		"redis-cli -h cache ping -a",
		"docker run -d --name=mongo -p 27017:27017 mongo:7",
		"docker run -d -e DB_HOST=mongo -p 27017:27017 img",
		"docker run -v /data/mysql:/var/lib/mysql -p3306:3306 mysql:8",
		"docker run --name mysql -p 127.0.0.1:3306:3306/tcp mysql:8",
		"ssh me@mongo -p 2222 nvidia-smi",
		"scp -P 2222 f me@unzip:/tmp",
		"kubectl logs deploy/mongo -p --tail 100",
		"srun --job-name=mongo -p gpu python serve.py",
		"{\"setup\": \"docker login nvcr.io\\ndocker run --gpus all -p 8000:8000 img\"}",
	} {
		if got := Text(in); got != in {
			t.Errorf("altered:\n in:  %q\n out: %q", in, got)
		}
	}
	// Hidden once, hidden for good: the value of --password= took the ';'
	// with it, and a second pass read the next command as the login's.
	for _, in := range []string{
		"docker login -u me --password=Zq7vLm2Xc9; docker run -p 8000:8000 vllm/vllm-openai",
		"docker login -u me --password=Zq7vLm2Xc9&&docker run -p 8000:8000 vllm/vllm-openai",
		"sshpass -p Zq7vLm2Xc9;ssh -p 2222 box",
		"mysql -uroot -pZq7vLm2Xc9&&echo done",
		"docker login -u me -p=Zq7vLm2Xc9 ghcr.io",
		"vllm serve m --api-key -Zq7vLm2Xc9 sshpass -p 8000",
	} {
		once := Text(in)
		if twice := Text(once); twice != once || strings.Contains(once, "Zq7vLm2Xc9") {
			t.Errorf("in:    %q\nonce:  %q\ntwice: %q", in, once, twice)
		}
	}
}

// listForms are a one-line command's words as a list, the exec form of a
// Dockerfile, a compose file or a Kubernetes manifest writes it in:
// ["docker", "login", "-p", "…"], ['sshpass','-p','…'], and so on.
func listForms(form, secret string) []string {
	if strings.ContainsAny(form, "\"'\\\n;&|()$@") {
		return nil // quotes, operators, continued lines: no plain words
	}
	words := strings.Fields(fmt.Sprintf(form, secret))
	var out []string
	for _, sep := range []string{`", "`, `","`, `' , '`} {
		q := sep[:1]
		out = append(out, "["+q+strings.Join(words, sep)+q+"]", "command: ["+q+strings.Join(words, sep)+q+", "+q+"--port"+q+"]")
	}
	return out
}
