// Package jsonw appends JSON strings exactly as encoding/json writes them,
// for the code that writes JSON by hand where encoding/json's reflection
// costs too much: the sim's stream chunks (a hundred thousand a second)
// and the site's JSON blocks (a few thousand strings a page).
package jsonw

import "unicode/utf8"

// AppendString appends s quoted as encoding/json quotes it: quotes,
// backslashes and control characters escaped, U+2028 and U+2029 escaped,
// invalid UTF-8 replaced by U+FFFD; with html also <, > and &, so nothing
// in a script block reads as markup (encoding/json's default, and
// json.Encoder's SetEscapeHTML(false) without).
func AppendString(b []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	safe := &plainSafe
	if html {
		safe = &htmlSafe
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainSafe and htmlSafe mark the ASCII bytes written as they are.
var plainSafe, htmlSafe = safeSets()

func safeSets() (plain, html [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		plain[c] = c >= 0x20 && c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return plain, html
}
