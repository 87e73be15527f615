package hostile

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"slices"
	"strings"
)

// The files a build reads, attacked: each the costliest input of its kind
// within (or just past) the build's bound for it, for a test that measures
// a build's peak memory and answer to Ctrl-C.

// DeepNotes are Markdown notes that nest one line n levels deep with
// block quotes and list items ("> - " n times): 80,000 took a build 42 s.
func DeepNotes(n int) []byte {
	return []byte(strings.Repeat("> - ", n) + "deep\n")
}

// CostlyNotes are notes of size bytes, within every nesting budget, that
// cost Markdown the most per byte measured: list items indented in waves.
func CostlyNotes(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size-256; i++ {
		b.WriteString(strings.Repeat(" ", 2*(i%90)) + "- item\n")
	}
	return b.Bytes()
}

// NumberFlood is the run file valid with its first per-second token count
// followed by small numbers up to size bytes: a valid run whose bytes cost
// the most memory to decode (a number of two bytes becomes eight).
func NumberFlood(valid []byte, size int) ([]byte, error) {
	for _, key := range []string{`"per_second_tokens":[`, `"per_second_tokens": [`} {
		if i := bytes.Index(valid, []byte(key)); i >= 0 {
			at := i + len(key)
			n := max(0, (size-len(valid))/2)
			out := slices.Concat(valid[:at], bytes.Repeat([]byte("1,"), n), valid[at:])
			// White space after the document makes it size bytes exactly
			// (n rounds down by one byte when size − len(valid) is odd),
			// so a flood past the bound is past it whatever the run.
			return append(out, bytes.Repeat([]byte(" "), max(0, size-len(out)))...), nil
		}
	}
	return nil, errors.New("the run has no per-second token counts to flood")
}

// DeepConfig is a configuration of size bytes whose one value is nested
// arrays: a megabyte took the TOML decoder 13 s and 1 GB.
func DeepConfig(size int) []byte {
	return []byte("[site]\ntitle = " + strings.Repeat("[", size))
}

// DottedConfig is a configuration whose one key has n dotted parts.
func DottedConfig(n int) []byte {
	return []byte(strings.Repeat("k.", n) + "v = 1\n")
}

// SparseFile makes name a file of size bytes that costs the disk nothing
// (a hole): a bucket object of gigabytes, read through file://.
func SparseFile(name string, size int64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	return cmp.Or(f.Truncate(size), f.Close())
}
