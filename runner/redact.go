package runner

import (
	"regexp"
	"strings"
)

// Redacted is what a secret in a launch command becomes.
const Redacted = "<redacted>"

var (
	// secretFlags take a secret as their value: --api-key KEY, --api-key=KEY,
	// -api-key KEY, --api-keys KEY, --middleware-api-key KEY, --hf-token…
	secretFlag = regexp.MustCompile(`(?i)((?:^|\s)--?(?:[a-z0-9]+-)*(?:api-keys?|hf-token|token|password|passwd|secret)(?:\s+|=))("[^"]*"|'[^']*'|\S+)`)
	// urlPassword is the password in a URL's user information.
	urlPassword = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)([^/\s@]+)@`)
	// secretEnv are environment assignments whose name says secret.
	secretEnv = regexp.MustCompile(`(?i)\b([A-Z0-9_]*(?:_TOKEN|_KEY|_SECRET|_PASSWORD))=("[^"]*"|'[^']*'|\S+)`)
	// authHeader is an Authorization header on a curl-like line.
	authHeader = regexp.MustCompile(`(?i)(Authorization:\s*(?:Bearer\s+|Basic\s+)?)([^"'\s]+)`)
)

// RedactCommand replaces the secrets in a launch command with <redacted>:
// the values of flags named for keys, tokens, passwords and secrets (one
// dash or two, with any prefix: --api-key, -api-key, --api-keys,
// --middleware-api-key, --hf-token), passwords in URLs, Authorization
// headers, and *_TOKEN=, *_KEY=, *_SECRET= assignments.
func RedactCommand(cmd string) string {
	cmd = secretFlag.ReplaceAllString(cmd, "${1}"+Redacted)
	cmd = urlPassword.ReplaceAllString(cmd, "${1}"+Redacted+"@")
	cmd = secretEnv.ReplaceAllString(cmd, "${1}="+Redacted)
	cmd = authHeader.ReplaceAllString(cmd, "${1}"+Redacted)
	return strings.TrimSpace(cmd)
}

// RedactURL hides the password of a URL's user information, for messages.
func RedactURL(u string) string {
	return urlPassword.ReplaceAllString(u, "${1}"+Redacted+"@")
}

// redactSecret replaces every occurrence of the live API key in s: the
// runner knows the key, so it can find it wherever a server or a person
// put it, under whatever flag.
func redactSecret(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, Redacted)
}
