// Package redact hides secrets in text before it leaves the program: in a
// log line, an error, a run file or a page. It is the one redaction step of
// matrixgen: every string that comes from a server, a tool, a URL or the
// person's launch command passes through a Redactor before it is cut to
// length, printed or written.
//
// Secrets are found by where they stand, not by what they look like: the
// value of a flag, header, environment assignment, JSON field or URL query
// parameter whose name says key, token, secret, password, auth or
// credential; a URL's user information; the word after "Bearer". The live
// API key, which the runner knows, is found by its value too, but only
// where it stands as a whole token, and only when it is long and unusual
// enough to be told from the names, figures and ids around it: a key such
// as "vllm" or "x" would otherwise turn an engine's name or "matrixgen"
// into <redacted>.
package redact

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Mark is what a secret becomes.
const Mark = "<redacted>"

// Redactor hides secrets in text: by position always, and by the live
// key's value when that key can be told from other text.
type Redactor struct {
	key  string // the live key, "" when it is not looked for by value
	frag int    // the shortest piece of the key hidden where a cut left it
	weak string // why the key is not looked for by value; "" when it is
}

// New returns a Redactor for the live API key (which may be empty).
func New(key string) *Redactor {
	r := &Redactor{}
	if key == "" {
		return r
	}
	if r.weak = weakness(key); r.weak == "" {
		r.key = key
		r.frag = min(8, len(key)/2)
	}
	return r
}

// minKeyLength is the shortest key looked for by its value: a shorter one
// could be any word or figure.
const minKeyLength = 8

// weakness says why key cannot be told from ordinary text, or "".
func weakness(key string) string {
	lower, upper, digits := 0, 0, 0
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case 'a' <= c && c <= 'z':
			lower++
		case 'A' <= c && c <= 'Z':
			upper++
		case '0' <= c && c <= '9':
			digits++
		}
	}
	// A word is letters of one case, or a short mix ("Secret"); random
	// letters in both cases, as long as a key, are no word (a 32-letter
	// key was once left unsearched for being letters only).
	word := lower+upper == len(key) && (lower == 0 || upper == 0 || len(key) < strongLetters)
	switch {
	case len(key) < minKeyLength:
		return fmt.Sprintf("is only %d characters long", len(key))
	case word:
		return "is an ordinary word (letters only)"
	case digits == len(key) && len(key) < strongLetters:
		return "is a number (digits only)"
	}
	return ""
}

// strongLetters is how long a key of letters in both cases, or of digits,
// must be to be told from words and figures.
const strongLetters = 16

// Warning is a sentence for the person when the key is too short or too
// ordinary to be found by its value, "" otherwise. It names no part of the
// key.
func (r *Redactor) Warning() string {
	if r.weak == "" {
		return ""
	}
	return "warning: the API key " + r.weak + ", so matrixgen cannot tell it from names and figures: " +
		"it is hidden where it stands as a secret (Authorization headers, flags such as --api-key, " +
		"variables such as *_KEY, URL passwords) but not wherever else a server may repeat it; " +
		"a long random key is safer"
}

// Text returns s with every secret it finds replaced by Mark.
func (r *Redactor) Text(s string) string {
	s = Positional(s)
	if r != nil && r.key != "" {
		s = r.hideKey(s)
	}
	return s
}

// Error returns err with its message redacted; errors.Is and errors.As
// still see the error it wraps.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := r.Text(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Is keeps errors.Is(err, target) for a redacted copy of target's kind.
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

// hideKey replaces the live key where it stands as a whole token, and a
// piece of its start at least frag long where it ends a token: what a cut
// to length (a bounded read of a server's error, say) leaves of a key that
// straddled it.
func (r *Redactor) hideKey(s string) string {
	k, head := r.key, r.key[:r.frag]
	return markWhere(s, head, func(start int) (int, bool) {
		n := len(head)
		for n < len(k) && start+n < len(s) && s[start+n] == k[n] {
			n++
		}
		end := start + n
		whole := n == len(k) && tokenEnd(s, end, k)
		cut := n < len(k) && (end == len(s) || !isAlnum(s[end]))
		return end, tokenStart(s, start, k) && (whole || cut)
	})
}

// Values hides each of values (of two characters or more) where it stands
// as a whole token in s: the known secrets of a place, such as a bucket
// URL's query values, in a message that may repeat them in any form.
func Values(s string, values ...string) string {
	for _, v := range values {
		if len(v) < 2 {
			continue
		}
		s = markWhere(s, v, func(start int) (int, bool) {
			end := start + len(v)
			return end, tokenStart(s, start, v) && tokenEnd(s, end, v)
		})
	}
	return s
}

// markWhere replaces with Mark each place needle is found in s whose
// secret, by hide, runs from there to end; hide says false where the
// needle is part of something else.
func markWhere(s, needle string, hide func(start int) (end int, ok bool)) string {
	var b strings.Builder
	copied := 0
	for from := 0; ; {
		at := strings.Index(s[from:], needle)
		if at < 0 {
			break
		}
		start := from + at
		if end, ok := hide(start); ok {
			b.WriteString(s[copied:start])
			b.WriteString(Mark)
			copied, from = end, end
			continue
		}
		from = start + 1
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}

// tokenStart reports whether the key found at i starts a token: nothing
// alphanumeric runs into it from the left. An escape written for a control
// character (\n, \x1b, \u2028: how a server's words are shown) ends a
// token too.
func tokenStart(s string, i int, key string) bool {
	if i == 0 || !isAlnum(key[0]) || !isAlnum(s[i-1]) {
		return true
	}
	return afterEscape(s[:i])
}

// tokenEnd reports whether the key ending at i ends a token.
func tokenEnd(s string, i int, key string) bool {
	return i == len(s) || !isAlnum(key[len(key)-1]) || !isAlnum(s[i])
}

// escapeBefore matches, at the end of the text before a token, an escape
// such as term.Line writes for a control character, or a terminal's
// control sequence (ESC [ 0 m), raw or so escaped: neither is part of the
// word a reader sees.
var escapeBefore = regexp.MustCompile(`(?:\\(?:[abfnrtv]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})|(?:\x1b|\\x1b|\\u001b)\[[0-9;?]*[A-Za-z]|(?:\xc2\x9b|\\u009b)[0-9;?]*[A-Za-z])$`)

func afterEscape(before string) bool {
	return escapeBefore.MatchString(before[max(0, len(before)-32):])
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// Positional hides the secrets that stand where secrets stand, whatever
// their value:
//
//   - the value of a flag whose name says secret: --api-key KEY,
//     --api_key=KEY, -apikey KEY, --hf-token "KEY", --auth KEY;
//   - a header's or a JSON field's value: -H 'X-Api-Key: KEY',
//     Authorization: Bearer KEY, {"api_key": "KEY"};
//   - an assignment's: HF_TOKEN=KEY, and a URL's query: ?token=KEY;
//   - a URL's user information, whole: https://TOKEN@host,
//     https://user:p@ss@host;
//   - the token after Bearer (one with a digit or a sign: a word after
//     "bearer" is prose).
//
// A name says secret when any of its parts (split at '-', '_', '.' and
// where lower case turns upper) ends with key, keys, token, secret,
// password, passwd, pwd, passphrase, auth, authorization, credential(s) or
// cookie, or is pass, jwt, pat, sig, signature, session or sas; a plain
// number after a name whose secret word is not its last part is a count
// (--num-api-key-retries 2), and --max-num-batched-tokens 8192 and
// --tokenizer-mode keep their values. A user's flag (-u, --user) hides
// what follows the colon of user:password.
func Positional(s string) string {
	if !strings.ContainsAny(s, "-:=@") && !strings.Contains(strings.ToLower(s), "bearer") {
		return s // nothing here can hold a secret by position
	}
	s = userinfo.ReplaceAllString(s, "${1}"+Mark+"@")
	s = replaceNamed(s, flagEquals)
	s = replaceNamed(s, flagSpaced)
	s = replaceNamed(s, fieldValue)
	s = replaceNamed(s, assignment)
	s = bearer.ReplaceAllStringFunc(s, func(m string) string {
		sub := bearer.FindStringSubmatch(m)
		if strings.Trim(sub[2], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			return m // a word ("the bearer of"), not a token
		}
		return sub[1] + Mark
	})
	return s
}

// The shapes of a value that follows a secret's name: quoted (kept
// quoted), or a run of characters up to a space, a quote or a separator.
const (
	quoted = `"(?:[^"\\]|\\.)*"|'[^']*'`
)

var (
	// userinfo is a URL's user information, to its last '@' before the
	// host: a password may hold '@' and ':' (though not '/', '?' or '#',
	// which no URL parser would take either).
	userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#"'<>]*@`)
	// flagEquals is a flag and its value, --name=value.
	flagEquals = regexp.MustCompile(`(?i)((?:^|[\s"'(\[{,;|&])--?([a-z][a-z0-9_.-]*)=)(` + quoted + `|[^\s"']+)`)
	// flagSpaced is --name value; the value may not start with '-' (that
	// is the next flag, after one that takes no value).
	flagSpaced = regexp.MustCompile(`(?i)((?:^|[\s"'(\[{,;|&])--?([a-z][a-z0-9_.-]*)[ \t]+)(` + quoted + `|[^\s"'-][^\s"']*)`)
	// fieldValue is a header or a JSON field, name: value, with an
	// authentication scheme kept (Bearer, Basic, Token).
	fieldValue = regexp.MustCompile(`(?i)((?:^|[^a-z0-9_.-])["']?([a-z][a-z0-9_.-]*)["']?[ \t]*:[ \t]*(?:(?:bearer|basic|token|digest|apikey)[ \t]+)?)(` + quoted + `|[^\s"',;{}\[\]][^\s"',;{}\[\]]*)`)
	// assignment is NAME=value: an environment variable, a query parameter,
	// a URL fragment's (#access_token=…), a config line's (KEY = "…").
	assignment = regexp.MustCompile(`(?i)((?:^|[\s"'?&;(,{#])([a-z_][a-z0-9_.-]*)[ \t]*=[ \t]*)(` + quoted + `|[^\s"'&#]+)`)
	// bearer is a bearer token wherever it stands.
	bearer = regexp.MustCompile(`(?i)\b(bearer[ \t]+)([^\s"',;<]+)`)
)

// replaceNamed hides the value (the third group) of each match of re whose
// name (the second group) says secret. A flag that switches something on
// or off (--no-auth, --disable-auth) takes no value after a space.
func replaceNamed(s string, re *regexp.Regexp) string {
	return re.ReplaceAllStringFunc(s, func(m string) string {
		sub := re.FindStringSubmatch(m)
		name, value := sub[2], sub[3]
		last, secret := secretWordAt(name)
		if userFlag(name) && strings.Contains(value, ":") && re != fieldValue {
			user, _, _ := strings.Cut(value, ":") // curl -u user:password
			return sub[1] + user + ":" + Mark
		}
		if !secret || re == flagSpaced && switchFlag(name) || !last && plainNumber(value) {
			return m // a count beside a secret's word (--num-api-key-retries 2) is a count
		}
		return sub[1] + hideValue(value)
	})
}

// hideValue is Mark in the value's quotes, if it had any.
func hideValue(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[:1] + Mark + v[:1]
	}
	return Mark
}

// switchFlag reports whether a flag's name says it turns something on or
// off, and so takes no value.
func switchFlag(name string) bool {
	first, _, _ := strings.Cut(strings.ToLower(name), "-")
	switch first {
	case "no", "disable", "enable", "skip", "allow", "require", "use", "with", "without", "trust":
		return true
	}
	return false
}

// secretEndings are how a part of a secret's name ends; secretParts are
// whole parts that say secret.
var (
	secretEndings = []string{"key", "keys", "token", "secret", "secrets", "password", "passwd", "pwd",
		"auth", "authorization", "credential", "credentials", "cookie", "passphrase"}
	secretParts = []string{"pass", "jwt", "pat", "sig", "signature", "session", "sas"}
)

// SecretName reports whether a flag's, header's, variable's or field's
// name says its value is a secret: any part of it (split at '-', '_', '.'
// and where lower case turns upper) is a secret's word.
func SecretName(name string) bool {
	_, found := secretWordAt(name)
	return found
}

// secretWordAt reports whether the name holds a secret's word and whether
// it is the name's last part (--api-key) or a part before another
// (--num-api-key-retries, whose value is a count).
func secretWordAt(name string) (last, found bool) {
	parts := nameParts(name)
	for i, p := range parts {
		if secretWord(p) {
			found, last = true, i == len(parts)-1
		}
	}
	return last, found
}

func secretWord(part string) bool {
	for _, end := range secretEndings {
		if strings.HasSuffix(part, end) {
			return true
		}
	}
	return slices.Contains(secretParts, part)
}

// nameParts splits a name into its lower-cased words.
func nameParts(name string) []string {
	var parts []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-' || c == '_' || c == '.':
			flush()
		case 'A' <= c && c <= 'Z' && i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z':
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
	}
	flush()
	return parts
}

// WithoutUserinfo drops a URL's user information: a repository's address
// says where the code is, never whose clone it was.
func WithoutUserinfo(s string) string {
	return userinfo.ReplaceAllString(s, "${1}")
}

// userFlag reports whether a flag names a user, whose value may carry the
// password after a colon (curl -u user:password, --user).
func userFlag(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	return n == "u" || n == "user"
}

// plainNumber reports whether v is digits, with a point at most.
func plainNumber(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if (v[i] < '0' || v[i] > '9') && v[i] != '.' {
			return false
		}
	}
	return true
}
