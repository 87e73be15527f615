package runner

import (
	"regexp"
	"strings"
)

// Redacted is what a secret in a launch command becomes.
const Redacted = "<redacted>"

var (
	// secretFlags take a secret as their value: --api-key KEY or --api-key=KEY.
	secretFlag = regexp.MustCompile(`(?i)(--(?:api-key|hf-token|token|password|secret)(?:\s+|=))("[^"]*"|'[^']*'|\S+)`)
	// secretEnv are environment assignments whose name says secret.
	secretEnv = regexp.MustCompile(`(?i)\b([A-Z0-9_]*(?:_TOKEN|_KEY|_SECRET|_PASSWORD))=("[^"]*"|'[^']*'|\S+)`)
	// authHeader is an Authorization header on a curl-like line.
	authHeader = regexp.MustCompile(`(?i)(Authorization:\s*(?:Bearer\s+|Basic\s+)?)([^"'\s]+)`)
)

// RedactCommand replaces the secrets in a launch command with <redacted>:
// the values of --api-key, --hf-token, --token (and --password, --secret),
// Authorization headers, and *_TOKEN=, *_KEY=, *_SECRET= assignments.
func RedactCommand(cmd string) string {
	cmd = secretFlag.ReplaceAllString(cmd, "${1}"+Redacted)
	cmd = secretEnv.ReplaceAllString(cmd, "${1}="+Redacted)
	cmd = authHeader.ReplaceAllString(cmd, "${1}"+Redacted)
	return strings.TrimSpace(cmd)
}
