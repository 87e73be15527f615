package redact

import (
	"regexp"
	"slices"
	"strings"
)

// Secrets are found by their shape too, wherever they stand, so a secret
// whose place no rule knows still has the look of a credential:
//
//   - a provider's token prefix with the body that provider issues: sk-…
//     (OpenAI, Anthropic), sk_live_/rk_live_, hf_, ghp_/gho_/ghu_/ghs_/ghr_,
//     github_pat_, glpat-, xoxb- and Slack's others, AWS key ids (AKIA,
//     ASIA + 16), AIza + 35, JSON web tokens (eyJ….eyJ….…) and a PEM
//     private key's body;
//   - a random run (randomRun): a run of a token's characters holding a
//     piece that reads as no word, figure or id.
//
// Figures, dates, versions, model names, UUIDs, git commits (public, and
// kept in run files), labelled digests (sha256:…), paths and camel-case
// words never have these shapes, and stay.
var tokenShapes = regexp.MustCompile(`(?:^|[^A-Za-z0-9])(?P<value>` + strings.Join([]string{
	`sk-[A-Za-z0-9_-]{20,}`, // with a digit and a letter: skKey
	`[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`,
	`hf_[A-Za-z0-9]{30,}`,
	`gh[pousr]_[A-Za-z0-9]{30,}`,
	`github_pat_[A-Za-z0-9_]{22,}`,
	`glpat-[A-Za-z0-9_-]{20,}`,
	`xox[aboprs]-[A-Za-z0-9-]{10,}`,
	`(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}`,
	`AIza[A-Za-z0-9_-]{35}`,
	`eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?`,
}, "|") + `)`)

// privateKey is a PEM private key: its body is hidden, to its end or to
// where the text was cut.
var privateKey = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?P<value>(?s:.*?))(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|$)`)

// findShaped calls hide with the span of each secret found by its shape
// in text.
func findShaped(text string, hide func(start, end int)) {
	for _, m := range tokenShapes.FindAllStringSubmatchIndex(text, -1) {
		s, e := m[2], m[3] // the value, the only group
		if strings.HasPrefix(text[s:], "sk-") && !skKey(text[s+3:e]) {
			continue
		}
		hide(s, e)
	}
	if strings.Contains(text, "PRIVATE KEY-----") {
		for _, m := range privateKey.FindAllStringSubmatchIndex(text, -1) {
			hide(m[2], m[3]) // the value, the only group
		}
	}
	eachRun(text, func(start, end int) {
		if randomRun(text, start, end) {
			hide(start, end)
		}
	})
}

// skKey reports whether body, after "sk-", is a key's: with letters and
// digits ("sk-learn-compatible-estimator" is a name).
func skKey(body string) bool {
	return strings.ContainsAny(body, "0123456789") &&
		strings.ContainsAny(body, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// runChar reports whether c is a token's character: base64's and
// base64url's alphabet, whose keys a run is cut into pieces of.
func runChar(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-'
}

// eachRun calls f with each run of a token's characters in text, with up
// to two '=' of base64's padding, less the separators at its ends.
func eachRun(text string, f func(start, end int)) {
	for i := 0; i < len(text); {
		if !runChar(text[i]) {
			i++
			continue
		}
		start := i
		for i < len(text) && runChar(text[i]) {
			i++
		}
		end := i
		for n := 0; n < 2 && i < len(text) && text[i] == '='; n++ {
			i++
		}
		if i > end && (i == len(text) || !runChar(text[i])) {
			end = i // padding, not an assignment's '='
		}
		for start < end && !isAlnum(text[start]) {
			start++
		}
		for end > start && !isAlnum(text[end-1]) && text[end-1] != '=' {
			end--
		}
		if end-start >= minRandomPiece {
			f(start, end)
		}
	}
}

// randomRun reports whether the run text[start:end] holds a random piece
// (of letters and digits). The whole run is then hidden, a path too: a
// base64 key holds '/', '+', '-' and '_', and half a key is a key.
func randomRun(text string, start, end int) bool {
	var joined []byte
	seps := 0
	words := true // every piece a word of one case or a number (VLLM_TOOL_PARSE_…, --speculative-accept-…)
	for i := start; i < end; {
		if !isAlnum(text[i]) {
			if text[i] != '=' { // padding cuts nothing
				seps++
			}
			i++
			continue
		}
		j := i
		for j < end && isAlnum(text[j]) {
			j++
		}
		if randomPiece(text[i:j], text[:i]) {
			return true
		}
		if j-i < minIDHex || !isHex(text[i:j]) {
			joined = append(joined, text[i:j]...)
		}
		words = words && ordinary(text[i:j])
		i = j
	}
	// Pieces each too short to tell, of a run as long as a key and cut as
	// seldom as base64 cuts one (not every few letters, as a path is), are
	// read as one piece, but for hex pieces, judged alone (a commit in a
	// path; hex cut by '-' is an id); a name of words joined is kept.
	return !(words && seps > 0) && len(joined) >= minRandomHex && seps*6 <= len(joined) && !isHex(string(joined)) &&
		randomPiece(string(joined), "")
}

// minRandomPiece is the shortest piece that can be random: a shorter one
// is too likely a word, an abbreviation or a short id; a key is longer.
const minRandomPiece = 20

// minRandomHex is the shortest hex piece that can be random: shorter ones
// are short hashes and ids; API keys in hex are 32 digits and more.
const minRandomHex = 32

// minIDHex is the shortest hex piece of a run read as an id or a hash of
// its own.
const minIDHex = 12

// randomPiece reports whether a piece of letters and digits reads as no
// word, figure or id; before is the text before it. Digits alone are a
// figure. Hex with digits and letters is random from 32 digits on, but
// for a git commit's 40 and a labelled digest or id. Any other piece of
// 20 or more is random when digits break into it three times or more (a
// name has a number or two: Qwen3, NVFP4), or when under 60% of its
// letters read as words (camel case splits into words, random letters do
// not), or under 80% when its cases share its letters evenly.
func randomPiece(p, before string) bool {
	if len(p) < minRandomPiece {
		return false
	}
	_, _, digits := classes(p)
	letters := len(p) - digits
	switch {
	case letters == 0:
		return false
	case digits > 0 && isHex(p):
		return len(p) >= minRandomHex && len(p) != 40 && !labelledDigest(before) && !labelledID(before)
	case digitGroups(p) >= 3:
		return true
	}
	if letters < 8 {
		return false
	}
	share := wordShare(p)
	return share < 0.6 || share < 0.8 && evenCases(p)
}

// evenCases reports whether upper and lower case share p's letters about
// evenly (35% to 65% each), as random letters do and camel case does not.
func evenCases(p string) bool {
	lower, upper, _ := classes(p)
	return 20*upper >= 7*(upper+lower) && 20*lower >= 7*(upper+lower)
}

// labelledDigest reports whether the text before a hex piece names a
// digest's algorithm, as image references do (…@sha256:…).
func labelledDigest(before string) bool {
	before = strings.ToLower(before[max(0, len(before)-7):])
	if strings.HasSuffix(before, "blobs/") {
		return true // a model store's file named by its digest (Hugging Face's cache)
	}
	// sha256:… in an OCI or Docker digest, sha256-… in Ollama's blob names
	return slices.ContainsFunc([]string{"sha256", "sha512", "sha384", "sha1", "md5"}, func(algo string) bool {
		return strings.HasSuffix(before, algo+":") || strings.HasSuffix(before, algo+"-")
	})
}

// idPrefixes name the hex ids servers give a request or a response
// (vLLM's chatcmpl-…, cmpl-…, req-…): an id, not a key.
var idPrefixes = []string{"chatcmpl-", "cmpl-", "modelperm-", "req-", "request-", "resp-", "embd-", "msg-", "run-", "trace-", "batch-", "call-"}

// labelledID reports whether the text before a hex piece is an id's prefix
// standing at a token's start.
func labelledID(before string) bool {
	for _, p := range idPrefixes {
		if at := len(before) - len(p); at >= 0 && strings.EqualFold(before[at:], p) {
			return at == 0 || !runChar(before[at-1])
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(p string) bool {
	return strings.Trim(p, "0123456789abcdef") == "" || strings.Trim(p, "0123456789ABCDEF") == ""
}

// digitGroups counts the runs of digits in p.
func digitGroups(p string) int {
	return len(strings.FieldsFunc(p, func(r rune) bool { return r < '0' || r > '9' }))
}

// wordShare is the share of p's letters that lie in pieces reading as
// words, p split as camel case splits (lower to upper, letters to digits,
// HTTPServer to HTTP Server).
func wordShare(p string) float64 {
	letters, inWords, start := 0, 0, 0
	for i := 1; i <= len(p); i++ {
		if i < len(p) && !camelBreak(p, i) {
			continue
		}
		piece := p[start:i]
		start = i
		if isDigit(piece[0]) {
			continue
		}
		letters += len(piece)
		if readsAsWord(piece) {
			inWords += len(piece)
		}
	}
	if letters == 0 {
		return 1
	}
	return float64(inWords) / float64(letters)
}

// camelBreak reports whether a new piece of p starts at i.
func camelBreak(p string, i int) bool {
	a, b := p[i-1], p[i]
	lowerA, upperA, upperB := 'a' <= a && a <= 'z', 'A' <= a && a <= 'Z', 'A' <= b && b <= 'Z'
	return isDigit(a) != isDigit(b) || lowerA && upperB ||
		upperA && upperB && i+1 < len(p) && 'a' <= p[i+1] && p[i+1] <= 'z'
}

// readsAsWord: three letters or more with a vowel and no more than four
// consonants in a row, or a lone capital (an initial: IPv6's I).
func readsAsWord(piece string) bool {
	if len(piece) < 3 {
		return len(piece) == 1
	}
	return strings.ContainsAny(piece, "aeiouyAEIOUY") && !fiveConsonants.MatchString(piece)
}

var fiveConsonants = regexp.MustCompile(`[^aeiouyAEIOUY]{5}`)
