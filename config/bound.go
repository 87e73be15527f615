package config

import (
	"fmt"

	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/internal/term"
)

// Bounds on a configuration file, checked before the TOML decoder sees it:
// it took 13 s and 1 GB on a megabyte of nested arrays ("a = [[[[…"), and
// had not finished nested inline tables after ten minutes.
const (
	maxFileBytes = 1 << 20
	maxNesting   = 32 // arrays and inline tables within one another, parts of a dotted key
)

// readBounded reads a configuration file: a regular file of at most
// maxFileBytes, checked as opened (internal/regular).
func readBounded(name string) ([]byte, error) {
	f, info, err := regular.OpenPath(name)
	if err != nil {
		return nil, err
	}
	return regular.Read(f, info, maxFileBytes, term.Name(name), "a configuration file")
}

// checkBounds refuses what the TOML decoder should not be given: more than
// maxFileBytes, or nesting past maxNesting (at its line).
func checkBounds(name string, data []byte) error {
	if len(data) > maxFileBytes {
		return fmt.Errorf("%s: %d bytes is larger than the %d a configuration file may be", name, len(data), maxFileBytes)
	}
	if line := tooDeep(data); line > 0 {
		return fmt.Errorf("%s:%d: arrays and inline tables nested, or a dotted key's parts, more than %d deep", name, line, maxNesting)
	}
	return nil
}

// tooDeep is the line where brackets and braces outside strings and
// comments first nest past maxNesting, or where a dotted key (a.b.c = 1,
// [a.b.c]) has more than maxNesting parts (counted from each place a key
// may start; a value's dots are few), or 0.
func tooDeep(data []byte) int {
	line, depth, dots := 1, 0, 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '.':
			if dots++; dots >= maxNesting {
				return line
			}
		case '=', ',':
			dots = 0
		case '\n':
			line++
			dots = 0
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i-- // the newline is counted above
		case '"', '\'':
			end, lines := stringEnd(data, i)
			line += lines
			i = end
		case '[', '{':
			dots = 0
			if depth++; depth > maxNesting {
				return line
			}
		case ']', '}':
			depth = max(0, depth-1)
		}
	}
	return 0
}

// stringEnd finds the last byte of the TOML string that opens at i (any
// kind; an unterminated one runs to the end), and the newlines inside it.
func stringEnd(data []byte, i int) (end, lines int) {
	q := data[i]
	delim := 1
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		delim = 3
	}
	for j := i + delim; j < len(data); j++ {
		switch {
		case data[j] == '\\' && q == '"':
			if j+1 < len(data) && data[j+1] == '\n' {
				lines++
			}
			j++
		case data[j] == '\n':
			if delim == 1 {
				return j - 1, lines // a one-line string ends at its line
			}
			lines++
		case data[j] == q && (delim == 1 || j+2 < len(data) && data[j+1] == q && data[j+2] == q):
			return j + delim - 1, lines
		}
	}
	return len(data) - 1, lines
}
