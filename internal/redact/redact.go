// Package redact hides secrets in text before it leaves the program (a log
// line, an error, a run file, a page): every string from a server, a tool,
// a URL or the launch command passes through it before it is cut, printed
// or written. A secret is found three ways:
//
//   - by its place (place.go): the value under a name that says key, token,
//     secret, password, auth or credential (flags, headers, assignments,
//     JSON, YAML, XML, query parameters), a URL's user information, the
//     word after "Bearer";
//   - by its shape (shape.go): a provider's token prefix (sk-, hf_, ghp_,
//     AKIA, eyJ…) or a random run no word, figure or id looks like;
//   - the live API key by its value (key.go), when it can be told from
//     names and figures; a weak key ("vllm") is warned about instead.
//
// The rules read views of the text (view.go) in which the many spellings
// of one thing are made one; what they find is hidden as written.
package redact

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Mark is what a secret becomes.
const Mark = "<redacted>"

// Redactor hides secrets in text: by position always, and by the live
// key's value when that key can be told from other text.
type Redactor struct {
	key  *keyFinder // nil when the key is not looked for by value
	weak string     // why the key is not looked for by value; "" when it is
	// known are other secrets a person gave (Also), hidden where they
	// stand as whole tokens.
	known []string
}

// Also is r that hides values too, wherever they stand as a whole token:
// a run's settings' secrets that a server may repeat in its errors. Values
// under four characters are left out: they would hide ordinary words.
func (r *Redactor) Also(values ...string) *Redactor {
	c := *r
	short := func(v string) bool { return len(v) < 4 }
	c.known = slices.Concat(r.known, slices.DeleteFunc(slices.Clone(values), short))
	return &c
}

// New returns a Redactor for the live API key (which may be empty).
func New(key string) *Redactor {
	r := &Redactor{}
	if key != "" {
		if r.weak = weakness(key); r.weak == "" {
			r.key = newKeyFinder(key)
		}
	}
	return r
}

// minKeyLength is the shortest key looked for by its value: a shorter one
// could be any word or figure.
const minKeyLength = 8

// weakness says why key cannot be told from ordinary text, or "".
func weakness(key string) string {
	lower, upper, digits := classes(key)
	// A word is letters of one case, or a short mix ("Secret"); a long mix
	// of cases is a key (a 32-letter key was once left unsearched).
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

// Warning says, naming no part of the key, why it is too short or too
// ordinary to be found by its value; "" when it is not.
func (r *Redactor) Warning() string {
	if r.weak == "" {
		return ""
	}
	return "warning: the API key " + r.weak + ", so matrixgen cannot tell it from names and figures: " +
		"it is hidden where it stands as a secret (Authorization headers, flags such as --api-key, " +
		"variables such as *_KEY, URL passwords) but not wherever else a server may repeat it; " +
		"a long random key is safer"
}

// Text returns s with every secret it finds replaced by Mark: by place,
// by shape and, when the key is strong, by the live key's value.
func (r *Redactor) Text(s string) string {
	if s == "" {
		return s
	}
	var spans []span
	for _, v := range views(s) {
		hide := func(start, end int) { spans = append(spans, v.original(start, end)) }
		findPlaced(v.text, hide)
		findShaped(v.text, hide)
		if r != nil && r.key != nil {
			r.key.find(v.text, hide)
		}
	}
	s = hideSpans(s, spans)
	if r != nil {
		s = Values(s, r.known...)
	}
	return s
}

// Text is Redactor.Text where no live key is known (a URL, a launch
// command, a store's error): secrets by their place or shape.
func Text(s string) string {
	return (*Redactor)(nil).Text(s)
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

// Values hides each of values (of two characters or more) where it stands
// as a whole token in s: the known secrets of a place, such as a bucket
// URL's query values, in a message that may repeat them in any form.
func Values(s string, values ...string) string {
	for _, v := range values {
		if len(v) < 2 {
			continue
		}
		var b strings.Builder
		copied := 0
		for from := 0; ; {
			at := strings.Index(s[from:], v)
			if at < 0 {
				break
			}
			start, end := from+at, from+at+len(v)
			// Nothing alphanumeric runs into a whole token, but an escape
			// written for a control character (\n, \x1b) ends one.
			startsToken := start == 0 || !isAlnum(v[0]) || !isAlnum(s[start-1]) ||
				escapeBefore.MatchString(s[max(0, start-32):start])
			if !startsToken || end < len(s) && isAlnum(v[len(v)-1]) && isAlnum(s[end]) {
				from = start + 1
				continue
			}
			b.WriteString(s[copied:start])
			b.WriteString(Mark)
			copied, from = end, end
		}
		if copied > 0 {
			b.WriteString(s[copied:])
			s = b.String()
		}
	}
	return s
}

// escapeBefore matches, at the end of the text before a token, an escape
// such as term.Line writes for a control character, or a terminal's
// control sequence (ESC [ 0 m), raw or so escaped: neither is part of the
// word a reader sees.
var escapeBefore = regexp.MustCompile(`(?:\\(?:[abfnrtv]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})|(?:\x1b|\\x1b|\\u001b)\[[0-9;?]*[A-Za-z]|(?:\xc2\x9b|\\u009b)[0-9;?]*[A-Za-z])$`)

// classes counts s's lowercase and uppercase ASCII letters and its digits.
func classes(s string) (lower, upper, digits int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z':
			lower++
		case 'A' <= c && c <= 'Z':
			upper++
		case '0' <= c && c <= '9':
			digits++
		}
	}
	return lower, upper, digits
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// URLSecrets are the parts of a URL that may be credentials, for a
// Redactor to hide by value wherever they turn up (a server may echo
// them): the query and each of its values (or bare words, "?TOKEN") raw,
// decoded and encoded again as a client may pass them on, and the user
// information (Password).
func URLSecrets(u *url.URL) []string {
	out := []string{u.RawQuery}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		name, raw, ok := strings.Cut(pair, "=")
		if !ok {
			raw = name
		}
		out = append(out, raw)
		v, err := url.QueryUnescape(raw)
		if err != nil {
			v = raw
		}
		out = append(out, v, url.QueryEscape(v), url.PathEscape(v))
	}
	if u.User != nil {
		out = append(out, u.User.Username(), u.User.String())
	}
	out = append(out, Password(u)...)
	// The longest first, so a value that holds another is hidden whole.
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return out
}

// Password is a URL's password as a server may echo it: alone, after its
// user, and as the Basic authorization Go's client sends for it; none
// without one.
func Password(u *url.URL) []string {
	p, ok := u.User.Password()
	if !ok {
		return nil
	}
	pair := u.User.Username() + ":" + p
	return []string{base64.StdEncoding.EncodeToString([]byte(pair)), pair, p}
}

// WithoutUserinfo drops a URL's user information: a repository's address
// says where the code is, never whose clone it was.
func WithoutUserinfo(s string) string {
	return dropUserinfo.ReplaceAllString(s, "${1}")
}

// dropUserinfo is a URL's user information, to its last '@' before the
// host, with what comes before it kept (the first group).
var dropUserinfo = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://|(?:^|[\s"'(=,;<>\[{|])//)[^\s/?#"'<>]+@`)
