// Package gguf writes a tiny llama-architecture model in the GGUF v3 format,
// with seeded random weights and a vocabulary made here, so tests can run a
// real inference server (llama.cpp, Ollama) without downloading anything:
// it says nothing sensible, but a server works on it as on a real one.
package gguf

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
)

// Model is the shape of the model to write.
type Model struct {
	Name          string
	Layers        int // transformer blocks
	Width         int // embedding length
	Heads         int // attention heads (as many KV heads)
	FeedForward   int // feed-forward length
	ContextLength int // the model's trained context
	Seed          uint64
}

// Tiny is the model the integration tests serve: 8 layers, 256 wide, about
// 1,300 tokens of vocabulary; 9 M parameters, 18 MB in F16.
func Tiny() Model {
	return Model{Name: "matrixgen-tiny", Layers: 8, Width: 256, Heads: 8, FeedForward: 1024, ContextLength: 32768, Seed: 1}
}

// Token types of a llama (SentencePiece) vocabulary.
const (
	tokenNormal  = 1
	tokenUnknown = 2
	tokenControl = 3
)

// Vocabulary returns the tokens of the model: <unk>, <s>, </s>, tab, newline,
// "▁", the printable ASCII characters, then word pieces, with and without
// "▁"; no byte-fallback tokens, which would make its text invalid UTF-8.
func Vocabulary() (tokens []string, types []int32) {
	seen := map[string]bool{}
	add := func(t string, kind int32) {
		if !seen[t] {
			seen[t] = true
			tokens = append(tokens, t)
			types = append(types, kind)
		}
	}
	add("<unk>", tokenUnknown)
	add("<s>", tokenControl)
	add("</s>", tokenControl)
	add("\t", tokenNormal)
	add("\n", tokenNormal)
	add("▁", tokenNormal)
	for c := byte('!'); c <= '~'; c++ {
		add(string(c), tokenNormal)
	}
	for _, w := range wordPieces() {
		add(w, tokenNormal)
		add("▁"+w, tokenNormal)
	}
	return tokens, types
}

// wordPieces are common English fragments and words.
func wordPieces() []string {
	out := []string{
		"the", "and", "of", "to", "in", "is", "it", "that", "was", "for", "on", "are", "as", "with", "his",
		"they", "at", "be", "this", "from", "have", "or", "by", "one", "had", "not", "but", "what", "all",
		"were", "when", "we", "there", "can", "an", "your", "which", "their", "said", "if", "do", "will",
		"each", "about", "how", "up", "out", "them", "then", "she", "many", "some", "so", "these", "would",
		"other", "into", "has", "more", "her", "two", "like", "him", "see", "time", "could", "no", "make",
		"than", "first", "been", "its", "who", "now", "people", "my", "made", "over", "did", "down", "only",
		"way", "find", "use", "may", "water", "long", "little", "very", "after", "words", "called", "just",
		"where", "most", "know", "get", "through", "back", "much", "go", "good", "new", "write", "our",
		"me", "man", "too", "any", "day", "same", "right", "look", "think", "also", "around", "another",
		"came", "come", "work", "three", "word", "must", "because", "does", "part", "even", "place",
		"well", "such", "here", "take", "why", "things", "help", "put", "years", "different", "away",
		"again", "off", "went", "old", "number", "great", "tell", "men", "say", "small", "every", "found",
		"still", "between", "name", "should", "home", "big", "give", "air", "line", "set", "own", "under",
		"read", "last", "never", "us", "left", "end", "along", "while", "might", "next", "sound", "below",
		"saw", "something", "thought", "both", "few", "those", "always", "show", "large", "often",
		"together", "asked", "house", "world", "going", "want", "school", "important", "until", "form",
		"food", "keep", "children", "feet", "land", "side", "without", "boy", "once", "animals", "life",
		"enough", "took", "sometimes", "four", "head", "above", "kind", "began", "almost", "live", "page",
		"got", "earth", "need", "far", "hand", "high", "year", "mother", "light", "parts", "country",
		"father", "let", "night", "following", "picture", "being", "study", "second", "eyes", "soon",
		"times", "story", "boys", "since", "white", "days", "ever", "paper", "hard", "near", "sentence",
		"better", "best", "across", "during", "today", "others", "however", "sure", "means", "knew", "its",
		"try", "told", "young", "miles", "sun", "ways", "thing", "whole", "hear", "example", "heard",
		"several", "change", "answer", "room", "sea", "against", "top", "turned", "learn", "point", "city",
		"play", "toward", "five", "using", "himself", "usually", "money", "seen", "car", "morning",
		"river", "garden", "bridge", "harbour", "lantern", "meadow", "orchard", "island", "valley",
		"mountain", "forest", "village", "market", "letter", "journey", "winter", "summer", "walked",
		"carried", "opened", "kept", "watched", "remembered", "wondered", "built", "painted", "followed",
		"gathered", "listened", "crossed", "quiet", "bright", "narrow", "ancient", "gentle", "heavy",
		"distant", "careful", "sudden", "patient", "curious", "silver", "golden", "wooden", "broken",
		"slowly", "quickly", "early", "late", "alone", "perhaps", "nearly", "already",
	}
	// Fragments: two- and three-letter pieces, the way a trained tokenizer
	// splits rarer words.
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for _, a := range "aeiou" {
		for _, b := range letters {
			out = append(out, string(a)+string(b), string(b)+string(a))
		}
	}
	return append(out, "ing", "ed", "er", "est", "ly", "tion", "ness", "ment", "able", "ful", "less", "ous", "ive", "al", "ic")
}

// Write writes the model to path.
func Write(path string, m Model) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := cmp.Or(m.encode(w), w.Flush(), f.Close()); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// GGUF value types.
const (
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeString  = 8
	typeArray   = 9
)

// ggml tensor types.
const (
	ggmlF32 = 0
	ggmlF16 = 1
)

const alignment = 32

type tensor struct {
	name string
	dims []uint64 // ggml order: the fastest-varying dimension first
	typ  uint32
	fill func(rng *rand.Rand) float32
}

func (t tensor) bytes() uint64 {
	n := uint64(2) // an F16 element
	if t.typ == ggmlF32 {
		n = 4
	}
	for _, d := range t.dims {
		n *= d
	}
	return n
}

func (m Model) tensors(vocab int) []tensor {
	e, ff, v := uint64(m.Width), uint64(m.FeedForward), uint64(vocab)
	ones := func(*rand.Rand) float32 { return 1 }
	normal := func(std float64) func(*rand.Rand) float32 {
		return func(rng *rand.Rand) float32 { return float32(rng.NormFloat64() * std) }
	}
	weights := normal(0.02)
	ts := []tensor{
		{"token_embd.weight", []uint64{e, v}, ggmlF16, normal(1)},
		{"output_norm.weight", []uint64{e}, ggmlF32, ones},
		{"output.weight", []uint64{e, v}, ggmlF16, weights},
	}
	for i := range m.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			tensor{p + "attn_norm.weight", []uint64{e}, ggmlF32, ones},
			tensor{p + "attn_q.weight", []uint64{e, e}, ggmlF16, weights},
			tensor{p + "attn_k.weight", []uint64{e, e}, ggmlF16, weights},
			tensor{p + "attn_v.weight", []uint64{e, e}, ggmlF16, weights},
			tensor{p + "attn_output.weight", []uint64{e, e}, ggmlF16, weights},
			tensor{p + "ffn_norm.weight", []uint64{e}, ggmlF32, ones},
			tensor{p + "ffn_gate.weight", []uint64{e, ff}, ggmlF16, weights},
			tensor{p + "ffn_up.weight", []uint64{e, ff}, ggmlF16, weights},
			tensor{p + "ffn_down.weight", []uint64{ff, e}, ggmlF16, weights},
		)
	}
	return ts
}

// encoder writes little-endian GGUF values and remembers the first error.
type encoder struct {
	w   io.Writer
	err error
	n   uint64 // bytes written
	kvs int    // metadata entries written
}

func (e *encoder) put(v any) {
	if e.err != nil {
		return
	}
	e.err = binary.Write(e.w, binary.LittleEndian, v)
	e.n += uint64(binary.Size(v))
}

func (e *encoder) str(s string) {
	e.put(uint64(len(s)))
	e.raw([]byte(s))
}

// key starts a metadata entry of type typ.
func (e *encoder) key(k string, typ uint32) {
	e.kvs++
	e.str(k)
	e.put(typ)
}

func (e *encoder) kvUint32(k string, v uint32)   { e.key(k, typeUint32); e.put(v) }
func (e *encoder) kvFloat32(k string, v float32) { e.key(k, typeFloat32); e.put(v) }
func (e *encoder) kvString(k, v string)          { e.key(k, typeString); e.str(v) }

// array starts a metadata entry that is an array of n values of type typ.
func (e *encoder) array(k string, typ uint32, n int) {
	e.key(k, typeArray)
	e.put(typ)
	e.put(uint64(n))
}

func (m Model) encode(w io.Writer) error {
	tokens, types := Vocabulary()
	ts := m.tensors(len(tokens))
	var meta bytes.Buffer
	e := &encoder{w: &meta}
	e.kvString("general.architecture", "llama")
	e.kvString("general.name", m.Name)
	e.kvUint32("general.alignment", alignment)
	e.kvUint32("general.file_type", 1) // mostly F16
	e.kvUint32("llama.context_length", uint32(m.ContextLength))
	e.kvUint32("llama.embedding_length", uint32(m.Width))
	e.kvUint32("llama.block_count", uint32(m.Layers))
	e.kvUint32("llama.feed_forward_length", uint32(m.FeedForward))
	e.kvUint32("llama.attention.head_count", uint32(m.Heads))
	e.kvUint32("llama.attention.head_count_kv", uint32(m.Heads))
	e.kvUint32("llama.rope.dimension_count", uint32(m.Width/m.Heads))
	e.kvFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	e.kvFloat32("llama.rope.freq_base", 10000)
	e.kvUint32("llama.vocab_size", uint32(len(tokens)))
	e.kvString("tokenizer.ggml.model", "llama")
	e.array("tokenizer.ggml.tokens", typeString, len(tokens))
	for _, t := range tokens {
		e.str(t)
	}
	e.array("tokenizer.ggml.scores", typeFloat32, len(tokens))
	for i, t := range tokens {
		// Longer pieces score higher, so the tokenizer prefers whole words.
		score := float32(0)
		if types[i] == tokenNormal {
			score = -1000 + float32(len(t))*10 - float32(i)*1e-3
		}
		e.put(score)
	}
	e.array("tokenizer.ggml.token_type", typeInt32, len(types))
	e.put(types)
	e.kvUint32("tokenizer.ggml.bos_token_id", 1)
	e.kvUint32("tokenizer.ggml.eos_token_id", 2)
	e.kvUint32("tokenizer.ggml.unknown_token_id", 0)
	if e.err != nil {
		return e.err
	}
	kvs := e.kvs
	e = &encoder{w: w}
	e.put([4]byte{'G', 'G', 'U', 'F'})
	e.put(uint32(3))
	e.put(uint64(len(ts)))
	e.put(uint64(kvs))
	e.raw(meta.Bytes())

	offset := uint64(0)
	for _, t := range ts {
		e.str(t.name)
		e.put(uint32(len(t.dims)))
		e.put(t.dims)
		e.put(t.typ)
		e.put(offset)
		offset = align(offset + t.bytes())
	}
	e.pad()
	rng := rand.New(rand.NewPCG(m.Seed, 0x99f))
	for _, t := range ts {
		buf := make([]byte, 0, t.bytes())
		for len(buf) < cap(buf) {
			if v := t.fill(rng); t.typ == ggmlF32 {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			} else {
				buf = binary.LittleEndian.AppendUint16(buf, toHalf(v))
			}
		}
		e.raw(buf)
		e.pad()
	}
	return e.err
}

func (e *encoder) raw(b []byte) {
	if e.err == nil && len(b) > 0 {
		_, e.err = e.w.Write(b)
		e.n += uint64(len(b))
	}
}

// pad writes zeros up to the next alignment boundary.
func (e *encoder) pad() {
	if n := align(e.n) - e.n; n > 0 {
		e.raw(make([]byte, n))
	}
}

func align(n uint64) uint64 { return (n + alignment - 1) / alignment * alignment }

// toHalf converts a float32 to IEEE 754 half precision, rounding to nearest
// even; values beyond the half range become ±Inf (never produced here).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case exp >= 31:
		return sign | 0x7c00
	case exp < -10: // zero too, and float32 subnormals
		return sign
	}
	shift := uint32(13)
	if exp <= 0 { // subnormal: the implicit leading bit becomes explicit
		mant |= 0x800000
		shift, exp = uint32(14-exp), 0
	}
	half := uint32(exp)<<10 | mant>>shift
	rem, mid := mant&(1<<shift-1), uint32(1)<<(shift-1)
	if rem > mid || (rem == mid && half&1 == 1) {
		half++ // may carry into the exponent, which is still right
	}
	return sign | uint16(half)
}
