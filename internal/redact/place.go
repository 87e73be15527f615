package redact

import (
	"regexp"
	"slices"
	"strings"
)

// The shapes of a value that follows a secret's name.
const (
	// quotedPiece is one quoted piece of a shell word or a JSON string:
	// '…', "…" (with its backslash escapes) or bash's ANSI-C $'…'.
	quotedPiece = `\$'(?:[^'\\]|\\.)*'|'[^']*'|"(?:[^"\\]|\\.)*"`
	// word is a shell word as a command line holds it: quoted pieces one
	// after another ('ab''cd', "ab"'cd'), or unquoted characters with
	// their backslash escapes. A quoted piece followed by unquoted text is
	// taken as the piece alone: in a command quoted whole ("--key=x" "--port")
	// the next quote is the next argument's. A user's password may be
	// quoted alone after the colon (curl -u admin:'pass word').
	word = `(?:\\.|[^\s"'\\:])*:(?:` + quotedPiece + `)+|(?:` + quotedPiece + `)+|(?:\\.|[^\s"'\\])+`
	// queryWord is a word that ends at a URL's '&' or '#' too, and before
	// a colon or a comma that ends it ("api_key=…: unknown key").
	queryWord = `(?:` + quotedPiece + `)+|(?:\\.|[^\s"'\\&#])*(?:\\.|[^\s"'\\&#:,])`
	// fieldWord is a field's value: Mark (the text may be redacted twice),
	// one quoted piece, or characters up to a separator of fields, not
	// ending in a colon, which ends a clause ("key: Bearer k: refused").
	fieldWord = `<redacted>|"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"',;{}\[\]<>]*[^\s"',;{}\[\]<>:]`
)

// A placeRule finds secrets by where they stand: its pattern's groups are
// "name" (if any) and "value"; keep says whether a match's value is secret.
type placeRule struct {
	re   *regexp.Regexp
	keep func(name, value string) (hide bool)
	// prose: the rule's separator (':') is also prose's, so a value that
	// is a lowercase word with more words after it is a sentence going on
	// ("Invalid API key: please check", "token: file not found").
	prose bool
	// list: the flag may take several values (vLLM's --api-key k1 k2):
	// the bare words after a secret's value are secrets too.
	list bool
	// needs are what the rule cannot match without, each strings ("a|b")
	// of which the lower-cased text must hold one: a pattern costs ~40 ns
	// a byte even where it finds nothing.
	needs []string
}

// lacks reports whether lower (a text lower-cased) lacks one of a rule's
// needs.
func (r placeRule) lacks(lower string) bool {
	return slices.ContainsFunc(r.needs, func(need string) bool {
		return !slices.ContainsFunc(strings.Split(need, "|"), func(w string) bool { return strings.Contains(lower, w) })
	})
}

// placeRules are the places secrets stand in. A value that follows a name
// is a secret when the name says so (secretWordAt).
var placeRules = append([]placeRule{
	// A URL's user information, to its last '@' before the host (a
	// password may hold '@' and ':'); scheme-relative URLs too.
	{re: regexp.MustCompile(`(?i)(?:\b[a-z][a-z0-9+.-]*:|(?:^|[\s"'(=,;<>\[{|]))//(?P<value>[^\s/?#"'<>]+)@`), needs: []string{"@", "/"}},
	// --name=value.
	{re: regexp.MustCompile(`(?i)(?:^|[\s"'(\[{,;|&=>])--?(?P<name>[a-z][a-z0-9_.-]*)=(?P<value>` + word + `)`), keep: flagValue, needs: []string{"-", "="}},
	// --name value, "--name", "value" and "--name" "value" (an argument
	// list), the value on the next line (a YAML or JSON list's next
	// element), and a value that starts with '-' after a name that takes one.
	{re: regexp.MustCompile(`(?i)(?:^|[\s"'(\[{,;|&=>])--?(?P<name>[a-z][a-z0-9_.-]*)(?:["']?[ \t]*,?[ \t]*\r?\n[ \t]*(?:-[ \t]+)?|["'][ \t]*,?[ \t]*|[ \t]+)(?P<value>` + word + `)`), keep: spacedFlagValue, list: true, needs: []string{"-"}},
	// A list under a secret's name, every element: 'api_key': ['k1', 'k2']
	// (vLLM logs its arguments so; its api_key is a list).
	{re: regexp.MustCompile(`(?i)(?:^|[^a-z0-9_.-])["']?(?P<name>[a-z][a-z0-9_.-]*)["']?[ \t]*(?::|=)[ \t]*\[(?P<value>[^\]\r\n]+)\]`), keep: namedList, needs: []string{":|=", "["}},
	// A header, a JSON, YAML, Python, Ruby or PHP field and a Go
	// assignment (name: value, 'name' => 'value', name := value), Go's and
	// JSON's dumps of a header (map[Name:[value]], []string{"value"}), an
	// authentication scheme kept (Bearer), YAML's value on the next line or
	// a block (password: |), Rust's Debug of an option (Some("…")).
	{re: regexp.MustCompile(`(?i)(?:^|[^a-z0-9_.-])["']?(?P<name>[a-z][a-z0-9_.-]*)["']?[ \t]*(?::=|:|=>)(?:(?:[ \t]*[|>][-+]?)?[ \t]*\r?\n[ \t]+)?[ \t]*(?:\[\]string\{|\[|Some\([ \t]*(?:\r?\n[ \t]*)?)?[ \t]*(?:(?:bearer|basic|token|digest|apikey)[ \t]+)?(?P<value>` + fieldWord + `)`), keep: namedValue, prose: true, needs: []string{":|="}},
	// NAME=value: an environment variable ($env:NAME=value too), a query
	// parameter, a URL fragment's, a config line's (KEY = "…"), one passed
	// as a flag's value (--env=HF_TOKEN=…), an index's (os.environ['K'] = …).
	{re: regexp.MustCompile(`(?i)(?:^|[\s"'?&;(,{#\[>=]|\$env:)(?P<name>[a-z_][a-z0-9_.-]*)(?:["']\])?[ \t]*=[ \t]*(?P<value>` + queryWord + `)`), keep: assignedValue, needs: []string{"="}},
	// A credential header's whole value, whatever its scheme (SharedKey
	// acct:…, Negotiate …) or how many cookies it holds: the field rule
	// takes one word, and would take an unknown scheme for the credential.
	{re: regexp.MustCompile(`(?i)(?:^|[^a-z0-9_.-])["']?(?:proxy-)?(?:authorization|cookie|set-cookie)["']?[ \t]*(?::|=>?)[ \t]*(?:\[\]string\{|\[)?[ \t]*["']?(?:(?:bearer|basic|token|digest|apikey)[ \t]+)?(?P<value>[^\r\n"'<>\]}]*[^\s"'<>\]}])`), keep: credentialHeader, needs: []string{":|="}},
	// A Kubernetes env entry: {"name": "API_KEY", "value": "…"}.
	{re: regexp.MustCompile(`(?i)["']?name["']?[ \t]*:[ \t]*["']?(?P<name>[a-z_][a-z0-9_.-]*)["']?\s*,?\s*["']?value["']?[ \t]*:[ \t]*(?P<value>` + fieldWord + `)`), keep: namedValue, needs: []string{":", "name", "value"}},
	// An XML element's text: <password>value</password>.
	{re: regexp.MustCompile(`(?i)<(?P<name>[a-z_][a-z0-9_.:-]*)(?:\s[^<>]*)?>(?P<value>[^<]+)<`), keep: namedValue, needs: []string{"<", ">"}},
	// The token after Bearer, wherever it stands (with a digit or a sign: a
	// word after "bearer" is prose).
	{re: regexp.MustCompile(`(?i)\bbearer[ \t]+["']?(?P<value>[^\s"',;<\]]*[^\s"',;<\]:])`), needs: []string{"bearer"}, keep: func(_, v string) bool {
		return strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != ""
	}},
}, passwordLetterRules()...)

// passwordLetters are the commands whose one-letter flag takes a password
// (docker run -p is a port, llama-server -p a prompt): each the command's
// name (after commandStart), what may stand between it and the flag, the
// flag's letter, what stands between the letter and the value ("": joined
// only, mysql -pSECRET), and a word the text must hold for the rule to run.
var passwordLetters = []struct {
	command, between, letter, apart, need string
}{
	{`(?:docker|podman|podman-remote|nerdctl|buildah|skopeo|oras|regctl(?:` + gap + `registry)?|finch|cosign|helm` + gap + `registry|crane` + gap + `auth|az(?:` + gap + `acr)?|(?:apptainer|singularity)` + gap + `remote)`,
		options + gap + `login` + anyWords, "p", `(?:` + gap + `|=)?`, "login"},
	// sshpass's options are few, and -e takes no value: ssh after it is
	// the command sshpass runs, its -p a port.
	{`sshpass`, `(?:` + gap + `-[fdP][ \t]*` + shellWord + `|` + gap + `-[ehvV]+)*?`, "p", `[ \t]*`, "sshpass"},
	{`(?:mysql[a-z]*|mariadb[a-z-]*|mariabackup|7z[arz]?)`, anyWords, "p", ``, "mysql|maria|7z"},
	{`(?:rar|unrar)`, anyWords, "h?p", ``, "rar"},
	{`(?:mongo(?:sh|dump|restore|import|export|stat|top|files)?|twine` + gap + `(?:upload|register))`, anyWords, "p", `(?:` + gap + `|=)`, "mongo|twine"},
	{`(?:cqlsh|beeline)`, anyWords, "p", gap, "cqlsh|beeline"},
	{`(?:zip|unzip|zipcloak|sqlcmd)`, anyWords, "P", gap, "zip|sqlcmd"},
	{`(?:redis-cli|redis-benchmark|valkey-cli|valkey-benchmark|keydb-cli)`, anyWords, "a", gap, "-a"},
}

// The pieces of passwordLetters' rules. They stay within one command (a
// shell's ;, &, |, < and > or a line not continued end it), and never
// cross nor take a value hidden already, so a second pass finds nothing.
const (
	// gap is what stands between two words: blanks, and lines continued.
	gap = `(?:[ \t]|\\\r?\n)+`
	// shellWord is a word as a shell reads it.
	shellWord = `(?:` + quotedPiece + `|\\.|[^\s"'\\;&|<>])+`
	// options are a command's options before the flag, each perhaps with
	// a value (docker run --name login is no login).
	options = `(?:` + gap + `-` + shellWord + `(?:` + gap + `(?:` + quotedPiece + `|\\.|[^-\s"'\\;&|<>])` + `(?:` + shellWord + `)?)?)*?`
	// anyWords are any words of the command.
	anyWords = `(?:` + gap + shellWord + `)*?`
	// commandStart is where a command's name may begin, perhaps after a
	// path: at a line's start (after a Makefile's @ or -), after a shell's
	// separator or a quote, or after a word that is no long option (sudo
	// -E, env X=1, --, --gres=gpu:1); after a long option it is the
	// option's value (docker run --name mysql).
	commandStart = `(?:(?:^|[\r\n;&|(\x60"']|\$\()[ \t]*(?:[@-][ \t]*)?|(?:^|\s)(?:[^-<\s]\S*|-[^-\s]\S*|--\S*=\S*|--)` + gap + `)(?:[.~]?/(?:[\w.-]+/)*)?`
	// passwordValue is the value: a shell word that is not an option, an
	// '=' or a value hidden already.
	passwordValue = `(?:` + quotedPiece + `|\\.|[^-=\s"'\\;&|<>])(?:` + shellWord + `)?`
)

// passwordLetterRules are passwordLetters' place rules; a variable
// reference and a port mapping (docker run -p 8000:8000) are kept.
func passwordLetterRules() []placeRule {
	var rules []placeRule
	for _, c := range passwordLetters {
		re := regexp.MustCompile(commandStart + c.command + `(?:\.exe)?` + c.between +
			gap + `-` + c.letter + c.apart + `(?P<value>` + passwordValue + `)`)
		rules = append(rules, placeRule{re: re, keep: func(_, v string) bool { return !shellVariable(v) && !portMapping.MatchString(v) },
			needs: []string{"-", c.need}})
	}
	return rules
}

// portMapping is a port published as docker writes it: [ip:]port:port.
var portMapping = regexp.MustCompile(`^(?:[0-9.]+:)?[0-9]+:[0-9]+(?:/(?:tcp|udp))?$`)

// findPlaced calls hide with the span of each secret the place rules find
// in text.
func findPlaced(text string, hide func(start, end int)) {
	lower := strings.ToLower(text)
	if !strings.ContainsAny(text, "-:=@<") && !strings.Contains(lower, "bearer") {
		return // nothing here can hold a secret by place
	}
	for _, rule := range placeRules {
		if rule.lacks(lower) {
			continue
		}
		name, value := rule.re.SubexpIndex("name"), rule.re.SubexpIndex("value")
		for pos := 0; pos < len(text); {
			m := rule.re.FindStringSubmatchIndex(text[pos:])
			if m == nil {
				break
			}
			vs, ve := pos+m[2*value], pos+m[2*value+1]
			n := ""
			if name > 0 {
				n = text[pos+m[2*name] : pos+m[2*name+1]]
			}
			prose := rule.prose && sentence(text[vs:ve], text[ve:])
			if s, e, ok := secretOf(rule, n, text[vs:ve]); ok && !prose {
				hide(vs+s, vs+e)
				if last, _ := secretWordAt(n); rule.list && last && takesKeys(n) {
					hideMoreValues(text, ve, hide)
				}
			}
			// The value may itself be a name (--no-auth --api-key k).
			pos = max(vs, pos+1)
		}
	}
}

// takesKeys reports whether a secret flag may take several values: a key
// flag (vLLM's --api-key k1 k2, --apikey). A password or a token is one value, and
// the word after it is the command's own (docker login --password p
// ghcr.io names the registry).
func takesKeys(name string) bool {
	parts := nameParts(name)
	return len(parts) > 0 && strings.HasSuffix(strings.TrimSuffix(parts[len(parts)-1], "s"), "key") // apikey too
}

// hideMoreValues hides the bare words after a secret flag's value (vLLM's
// --api-key k1 k2), up to the next flag, the line's end, a shell's
// operator or a plain word (prose going on, a number).
func hideMoreValues(text string, at int, hide func(start, end int)) {
	for {
		m := nextWord.FindStringSubmatchIndex(text[at:])
		if m == nil {
			return
		}
		ws, we := at+m[2], at+m[3]
		if c := text[ws]; c == '-' || strings.IndexByte("&|;<>()`\\#", c) >= 0 || ordinary(strings.TrimRight(text[ws:we], ".,:;")) {
			return // a flag, an operator, or a word of prose or a number
		}
		hide(ws, we)
		at = we
	}
}

// nextWord is the shell word after spaces on the same line.
var nextWord = regexp.MustCompile(`^[ \t]+(` + word + `)`)

// namedList: a list under a name that says secret is secrets, but one of
// numbers or switches' words (a count's, a setting's).
func namedList(name, value string) bool {
	secretLike := func(e string) bool { return !plainSetting(strings.TrimSpace(e)) }
	return NamesSecret(name, !slices.ContainsFunc(strings.Split(value, ","), secretLike))
}

// sentence reports whether value, with what follows it, reads as prose:
// a lowercase word, then a space and another word.
func sentence(value, after string) bool {
	return strings.Trim(value, "abcdefghijklmnopqrstuvwxyz") == "" &&
		len(after) >= 2 && after[0] == ' ' && 'a' <= after[1] && after[1] <= 'z'
}

// secretOf returns the part of a matched value that is a secret: inside
// its quotes, after the colon of a user's flag (curl -u user:password),
// else all of it.
func secretOf(rule placeRule, name, value string) (start, end int, ok bool) {
	if strings.HasPrefix(value, Mark) {
		// Hidden already; what follows the mark is the text's.
		return 0, 0, false
	}
	if rule.keep != nil && !rule.keep(name, value) {
		return 0, 0, false
	}
	if userFlag(name) {
		_, password, _ := strings.Cut(value, ":")
		start, end = len(value)-len(password), len(value)
		if q := value[0]; (q == '"' || q == '\'') && len(value) > 1 && value[end-1] == q {
			end-- // 'user:password': the closing quote is the command's
		} else if len(password) > 1 && len(onePiece.FindString(password)) == len(password) {
			start, end = start+1, end-1 // user:'password': its quotes are the command's
		}
		return start, end, start < end
	}
	if len(onePiece.FindString(value)) == len(value) {
		return 1, len(value) - 1, true
	}
	return 0, len(value), true
}

// onePiece is a value quoted whole, in one piece: its quotes are kept.
var onePiece = regexp.MustCompile(`^(?:"(?:[^"\\]|\\.)*"|'[^']*')`)

// flagValue: --name=value is a secret when the name says so; a plain
// number beside a secret's word that is not the name's last part is a
// count (--num-api-key-retries=2).
func flagValue(name, value string) bool {
	if userFlag(name) { // user:password, as curl reads it: -u https://h is user "https"
		return strings.Contains(value, ":")
	}
	return !switchWord(value) && !shellVariable(value) && NamesSecret(name, plainSetting(value))
}

// spacedFlagValue: as flagValue, but a switch (--no-auth) takes no value
// after a space, bar one that may take the token itself (Hugging Face's
// --use-auth-token <token>); a value that starts with '-' is one only after
// a name whose last word says secret (--api-key -abc123), never a long flag.
func spacedFlagValue(name, value string) bool {
	last, _ := secretWordAt(name)
	first, _, _ := strings.Cut(strings.ToLower(name), "-")
	takesToken := last && strings.HasPrefix(strings.ToLower(strings.TrimLeft(name, "-")), "use")
	if switchPart(first) && (plainSetting(value) || !takesToken) || !flagValue(name, value) {
		return false
	}
	return value[0] != '-' || last && len(value) > 1 && value[1] != '-'
}

// NamesSecret reports whether a value standing under name (a field, a
// table's key) is a secret by its name alone (api_key, X-Api-Key; not
// key_cache_dtype), for values that are not text. A number or a switch's
// word (plain) under a name whose secret's word is not its last
// (num_api_key_retries 3) is a setting.
func NamesSecret(name string, plain bool) bool {
	last, secret := secretWordAt(name)
	if plain && slices.ContainsFunc(nameParts(name), switchPart) {
		return false // a switch's setting: HF_HUB_DISABLE_IMPLICIT_TOKEN=1
	}
	return secret && (last || !plain)
}

// namedValue: a field's or element's value is a secret when its name says
// so, but a count beside a secret's word is a count.
func namedValue(name, value string) bool {
	if strings.HasSuffix(value, ":") {
		return false // the next field's name (token:\n  type: x)
	}
	return !switchWord(value) && !shellVariable(value) && NamesSecret(name, plainSetting(value))
}

// credentialHeader: a credential header's value is a secret unless it is
// one already hidden or prose ("Authorization: missing or invalid").
func credentialHeader(_, value string) bool {
	v := strings.TrimSpace(value)
	switch strings.ToLower(v) {
	case "", "bearer", "basic", "token", "digest", "apikey":
		return false // the scheme before a value already hidden
	}
	w, _, _ := strings.Cut(v, " ")
	return !sentence(w, v[len(w):])
}

// assignedValue: as namedValue; "=>" and "==" are not assignments.
func assignedValue(name, value string) bool {
	return value[0] != '>' && value[0] != '=' && namedValue(name, value)
}

// switchPart reports whether a part of a name says switch.
func switchPart(part string) bool {
	return slices.Contains([]string{
		"no", "disable", "enable", "skip", "allow", "require", "use", "with", "without", "trust",
	}, part)
}

// secretWords are the parts of a name that say secret, whole or after a
// credential's qualifier in a joined word (authtoken, dbpassword); a
// number may follow (DB_PASSWORD1). "key" names many things (--sort-key):
// it says secret only as the whole name or after, or joined to, a
// credential's qualifier (X-Api-Key, WANDB_KEY, accesskey).
var (
	secretWords = []string{"token", "oauth", "xauth", "userpass", "sessionid", "sid", "secret", "secrets", "password", "passwd", "pwd",
		"auth", "authorization", "credential", "credentials", "cookie", "passphrase", "passcode", "pincode", "otp", "totp", "mfa", "mnemonic", "pw", "cred", "creds", "hft",
		"pass", "jwt", "pat", "sig", "signature", "session", "sas", "apikey", "apikeys"}
	keyWords      = []string{"key", "keys"}
	keyQualifiers = []string{"api", "access", "secret", "private", "client", "auth", "master", "signing",
		"license", "subscription", "service", "app", "application", "account", "storage", "sas", "session", "encryption",
		"ssh", "tls", "ssl", "cert", "priv", "deploy", "admin", "openai", "hf", "x", "pass", "jwt", "hmac", "shared", "root", "user", "personal", "bot", "webhook",
		// services whose keys a launch command or its environment carries
		"azure", "aws", "gcp", "google", "gemini", "sa", "anthropic", "cohere", "mistral", "groq", "together", "fireworks",
		"replicate", "deepseek", "openrouter", "huggingface", "wandb", "ngc", "nvidia", "nim", "github", "gh", "gitlab",
		"b2", "r2", "minio", "cloudflare", "runpod", "modal", "langsmith", "langchain", "pinecone", "slack", "stripe"}
	joinedQualifiers = append([]string{"db", "user", "root", "bearer", "refresh", "id"}, keyQualifiers...)
	// vocabularyQualifiers before "token" name a token of a model's
	// vocabulary or a count of them (bos_token, timings_per_token).
	vocabularyQualifiers = []string{"bos", "eos", "pad", "unk", "sep", "cls", "mask", "eot", "eom", "fim", "special", "stop",
		"new", "cached", "next", "first", "last", "per", "prompt", "output", "input", "total", "generated", "decode",
		"thinking", "reasoning", "image", "audio", "video", "tool", "end", "start", "begin", "default", "chat"}
	// anyPrefixWords say secret at the end of a joined word whatever stands
	// before them (PGPASSWORD, JSESSIONID, PHPSESSID, clientsecret).
	anyPrefixWords = []string{"password", "passwd", "passphrase", "secret", "sessionid", "sessid"}
	// valueParts may follow a secret's word in a name that still names
	// the secret itself (--key-value, SECRET_KEY_BASE).
	valueParts = []string{"value", "val", "str", "string", "data", "b64", "base64", "hex", "raw", "base"}
	// otherParts, after a secret's word, make the name name something
	// else: where it is kept (api_key_file), its kind (--auth-mode), a
	// count or size beside it (--long-prefill-token-threshold). Any other
	// part (--api-key-primary, --private-key-pem) still names the secret:
	// an unknown word hides the value rather than publish it.
	otherParts = []string{"file", "files", "path", "paths", "dir", "directory", "folder", "env", "var", "variable", "name", "names",
		"type", "dtype", "kind", "mode", "method", "scheme", "provider", "algorithm", "alg", "format", "fmt", "encoding",
		"url", "uri", "endpoint", "host", "server", "port", "ids", "cache", "store", "location", "source", "id",
		"threshold", "limit", "budget", "max", "min", "num", "interval", "window", "rate", "ratio", "delay",
		"enabled", "enable", "disabled", "disable", "required", "require", "only", "level", "version",
		"expiration", "lifetime", "rotation", "rotate", "usage", "details", "stats", "logging", "log", "dim", "tree",
		"bucket", "table", "field", "column", "map", "latency", "stdin", "budget", "parser", "template", "prefix", "suffix"}
)

// secretWordAt reports whether the name holds a secret's word and whether
// it is the name's last part (--api-key) rather than one before another
// (--num-api-key-retries); a secret's word followed by parts that name
// something else (api_key_file) is no secret's name.
func secretWordAt(name string) (last, found bool) {
	parts := nameParts(name)
	for i, p := range parts {
		prev := ""
		if i > 0 {
			prev = parts[i-1]
		}
		if !secretWord(p, prev, i == 0 && len(parts) == 1 || i == 0 && followedByValue(parts[1:])) {
			continue
		}
		rest := parts[i+1:]
		if i == len(parts)-1 || followedByValue(rest) && len(rest) == 1 {
			return true, true // --api-key, --secret-value: the secret itself, a number too
		}
		if followedByValue(rest) || !slices.ContainsFunc(rest, namesOther) {
			found = true
		}
	}
	return false, found
}

// followedByValue reports whether the parts after a secret's word say
// "its value" (--secret-value, tokenValue).
func followedByValue(rest []string) bool {
	return len(rest) > 0 && slices.Contains(valueParts, rest[len(rest)-1])
}

// namesOther reports whether a part after a secret's word is one of
// otherParts, a number after it or not.
func namesOther(part string) bool {
	return slices.Contains(otherParts, strings.TrimRight(part, "0123456789")) && strings.TrimRight(part, "0123456789") != ""
}

// secretWord reports whether a part of a name says secret; prev is the
// part before it, alone whether the part stands for the whole name.
func secretWord(part, prev string, alone bool) bool {
	part = strings.TrimRight(part, "0123456789")
	if slices.Contains(keyWords, part) {
		return alone || slices.Contains(keyQualifiers, prev)
	}
	if slices.Contains(secretWords, part) {
		return !(part == "token" && slices.Contains(vocabularyQualifiers, prev))
	}
	if slices.ContainsFunc(anyPrefixWords, func(w string) bool { return strings.HasSuffix(part, w) }) {
		return true
	}
	for _, w := range append(keyWords, secretWords...) {
		q, ok := strings.CutSuffix(part, w)
		if ok && (len(w) > 3 && slices.Contains(joinedQualifiers, q) || slices.Contains(keyWords, w) && slices.Contains(keyQualifiers, q)) {
			return true
		}
	}
	return false
}

// nameParts splits a name into its lower-cased words: at '-', '_', '.'
// and where a capital follows a lowercase letter (camelCase).
func nameParts(name string) []string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if c := name[i]; 'A' <= c && c <= 'Z' && i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z' {
			b.WriteByte('.')
		}
		b.WriteByte(name[i])
	}
	separator := func(r rune) bool { return r == '-' || r == '_' || r == '.' }
	return strings.FieldsFunc(strings.ToLower(b.String()), separator)
}

// userFlag reports whether a flag names a user, whose value may carry the
// password after a colon (curl -u user:password, --user).
func userFlag(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	return n == "u" || n == "user"
}

// shellVariable reports whether v is a reference to a variable ($HF_TOKEN,
// "${VLLM_API_KEY}"): the name of the secret, not the secret.
func shellVariable(v string) bool {
	v = strings.Trim(v, `"`)
	name, ok := strings.CutPrefix(v, "$")
	if !ok {
		return false
	}
	// Unbraced, an environment variable's capitals only: a password may
	// begin with '$' ($ecretP4ss).
	allowed := "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
	if inner, ok := strings.CutPrefix(name, "{"); ok {
		if name, ok = strings.CutSuffix(inner, "}"); !ok {
			return false
		}
		allowed += "abcdefghijklmnopqrstuvwxyz"
	}
	return name != "" && strings.Trim(name, allowed) == "" && !isDigit(name[0])
}

// switchWord reports whether v is a boolean or null (True, None, null):
// never a secret, whatever it stands under (api_key=None).
func switchWord(v string) bool {
	v = strings.ToLower(strings.Trim(v, `"'`))
	return slices.Contains([]string{"true", "false", "none", "null", "nil"}, v)
}

// plainSetting reports whether v is a number or a switch's word (true,
// off, auto): a setting, never a secret.
func plainSetting(v string) bool {
	switch strings.ToLower(strings.Trim(v, `"'`)) {
	case "true", "false", "yes", "no", "on", "off", "none", "auto", "null", "enabled", "disabled":
		return true
	}
	v = strings.Trim(v, `"'`)
	if kind, rest, ok := strings.Cut(v, ":"); ok && (kind == "bool" || kind == "int" || kind == "float") {
		v = rest // llama.cpp's --override-kv key=type:value
	}
	return switchWord(v) || v != "" && strings.Trim(v, "0123456789.") == "" // digits and points
}
