package gguf

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWriteHeader writes the tiny model and reads back what a GGUF reader
// checks first: magic, version, tensor and metadata counts, the alignment of
// the data, and the size the tensors add up to.
func TestWriteHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	m := Tiny()
	if err := Write(path, m); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data[:4]) != "GGUF" || binary.LittleEndian.Uint32(data[4:]) != 3 {
		t.Fatalf("header %q version %d", data[:4], binary.LittleEndian.Uint32(data[4:]))
	}
	tokens, _ := Vocabulary()
	wantTensors := uint64(3 + 9*m.Layers)
	if got := binary.LittleEndian.Uint64(data[8:]); got != wantTensors {
		t.Errorf("%d tensors, want %d", got, wantTensors)
	}
	if got := binary.LittleEndian.Uint64(data[16:]); got != 21 {
		t.Errorf("%d metadata entries, want 21", got)
	}
	var weights uint64
	for _, ts := range m.tensors(len(tokens)) {
		weights += align(ts.bytes())
	}
	if len(data)%alignment != 0 || uint64(len(data)) < weights || uint64(len(data)) > weights+1<<20 {
		t.Errorf("file of %d bytes for %d bytes of tensors", len(data), weights)
	}
}

// TestVocabulary checks what servers need of the vocabulary: the special
// tokens where the metadata says, every piece valid UTF-8, no duplicates,
// no byte-fallback tokens, and words to tokenize prose with.
func TestVocabulary(t *testing.T) {
	tokens, types := Vocabulary()
	if tokens[0] != "<unk>" || tokens[1] != "<s>" || tokens[2] != "</s>" || len(tokens) != len(types) {
		t.Fatalf("special tokens %q", tokens[:3])
	}
	if len(tokens) < 1200 {
		t.Errorf("%d tokens; want a thousand or more word pieces", len(tokens))
	}
	seen := map[string]bool{}
	for _, tok := range tokens {
		if seen[tok] || !utf8.ValidString(tok) || strings.HasPrefix(tok, "<0x") {
			t.Errorf("token %q: duplicate, invalid UTF-8 or byte fallback", tok)
		}
		seen[tok] = true
	}
	for _, want := range []string{"\n", "▁", "a", "▁the", "the"} {
		if !seen[want] {
			t.Errorf("no token %q", want)
		}
	}
}

func TestToHalf(t *testing.T) {
	for _, tt := range []struct {
		in   float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff}, {1e6, 0x7c00},
		{float32(math.Ldexp(1, -24)), 0x0001}, {float32(math.Ldexp(1, -14)), 0x0400}, {1e-9, 0},
		{1 + float32(math.Ldexp(1, -11)), 0x3c00}, // a tie rounds to even
		{0.1, 0x2e66},
	} {
		if got := toHalf(tt.in); got != tt.want {
			t.Errorf("toHalf(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}
