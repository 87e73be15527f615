package sim

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"
)

// The simulated tokenizer is one token per whitespace-separated word, plus
// the chat template's markers: each message is <|role|>, its words, <|end|>,
// and the generation prompt adds <|assistant|>. It is deliberately simple;
// what matters is that /tokenize and the prompt_tokens of a completion count
// with the same function, as a real server does.

// message is one chat message of a request.
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or an array of {"type":"text","text":…} parts
}

// text is the message's content as one string; parts that are not text count
// for nothing, as an image would in a text-only model.
func (m message) text() string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, part := range c {
			p, _ := part.(map[string]any) // nil, which holds no text, when not an object
			if t, ok := p["text"].(string); ok {
				b.WriteString(t)
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	return ""
}

// forEachToken calls f with every token of the templated chat, in order.
func forEachToken(msgs []message, addGenerationPrompt bool, f func(tok string)) {
	for _, m := range msgs {
		f("<|" + m.Role + "|>")
		for w := range strings.FieldsSeq(m.text()) {
			f(w)
		}
		f("<|end|>")
	}
	if addGenerationPrompt {
		f("<|assistant|>")
	}
}

// tokenID is a stable id for a token, for /tokenize's "tokens".
func tokenID(tok string) int {
	h := fnv.New32a()
	h.Write([]byte(tok))
	return int(h.Sum32()%100000) + 100
}

// tokenIDs are the ids of a plain text's tokens, its words: never null.
func tokenIDs(s string) []int {
	ids := []int{}
	for w := range strings.FieldsSeq(s) {
		ids = append(ids, tokenID(w))
	}
	return ids
}

// prompt is a tokenized request: its length and the hashes of its full
// blocks, each chained to the one before as vLLM's prefix cache hashes them,
// so a block matches only when everything before it matches too.
type prompt struct {
	tokens int
	blocks []uint64
}

// tokenizePrompt counts a templated chat and hashes its blocks, salted by
// cacheSalt. Each word counts wordTokens tokens (at least one).
func tokenizePrompt(msgs []message, cacheSalt string, blockSize, wordTokens int) prompt {
	var p prompt
	h := fnv.New64a()
	h.Write([]byte(cacheSalt))
	chain := h.Sum64()
	inBlock := 0
	addOne := func(tok string) {
		p.tokens++
		h.Write([]byte(tok))
		h.Write([]byte{0})
		if inBlock++; inBlock == blockSize {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], chain)
			h.Write(b[:])
			chain = h.Sum64()
			p.blocks = append(p.blocks, chain)
			h.Reset()
			inBlock = 0
		}
	}
	forEachToken(msgs, true, func(tok string) {
		addOne(tok)
		if !strings.HasPrefix(tok, "<|") {
			for i := 1; i < wordTokens; i++ {
				addOne(tok + "#" + strconv.Itoa(i))
			}
		}
	})
	return p
}
