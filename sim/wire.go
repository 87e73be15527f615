package sim

import (
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// The chunk writers below build vLLM's SSE payloads by appending bytes, in
// vLLM's field order, because a sim holding a thousand streams writes a
// hundred thousand of them a second.

// appendString appends s as a JSON string, quoted by jsontext: minimal
// escaping, no HTML escaping, as servers send text. Invalid UTF-8, which
// the sim's own text never holds, becomes U+FFFD, and the error saying so
// is of no use to a chunk already promised.
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}

// appendOrNull appends s as a JSON string, or null when it is empty.
func appendOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

// appendInt appends the literal before, then v.
func appendInt(b []byte, before string, v int) []byte {
	return strconv.AppendInt(append(b, before...), int64(v), 10)
}

// appendChunkHead starts a chat.completion.chunk up to its choices array.
func appendChunkHead(b []byte, id string, created int64, model string) []byte {
	b = appendString(append(b, `{"id":`...), id)
	b = strconv.AppendInt(append(b, `,"object":"chat.completion.chunk","created":`...), created, 10)
	b = appendString(append(b, `,"model":`...), model)
	return append(b, `,"choices":`...)
}

// usage is the token counts a chunk reports.
type usage struct {
	prompt, completion, reasoning int
}

func appendUsage(b []byte, u usage, details bool) []byte {
	b = appendInt(b, `"usage":{"prompt_tokens":`, u.prompt)
	b = appendInt(b, `,"total_tokens":`, u.prompt+u.completion)
	b = appendInt(b, `,"completion_tokens":`, u.completion)
	if details && u.reasoning > 0 {
		b = append(appendInt(b, `,"completion_tokens_details":{"reasoning_tokens":`, u.reasoning), '}')
	}
	return append(b, '}')
}

// deltaChunk is one streamed choice: a delta of role, reasoning or content.
type deltaChunk struct {
	role, field, text string // field is "content" or "reasoning"
	finish            string // finish_reason, or "" for null
	usage             *usage // continuous usage, or nil
}

func appendDeltaChunk(b []byte, id string, created int64, model string, d deltaChunk) []byte {
	b = appendChunkHead(append(b, "data: "...), id, created, model)
	b = append(b, `[{"index":0,"delta":{`...)
	if d.role != "" {
		b = append(appendString(append(b, `"role":`...), d.role), `,"content":""`...)
	} else {
		b = appendString(append(appendString(b, d.field), ':'), d.text)
	}
	b = appendOrNull(append(b, `},"logprobs":null,"finish_reason":`...), d.finish)
	if d.finish != "" {
		b = append(b, `,"stop_reason":null`...)
	}
	b = append(b, "}]"...)
	if d.usage != nil {
		b = appendUsage(append(b, ','), *d.usage, false)
	}
	return append(b, "}\n\n"...)
}

// appendUsageChunk is the final chunk of include_usage: no choices, usage.
func appendUsageChunk(b []byte, id string, created int64, model string, u usage) []byte {
	b = appendChunkHead(append(b, "data: "...), id, created, model)
	b = append(b, "[],"...)
	return append(appendUsage(b, u, true), "}\n\n"...)
}

// appendErrorEvent is vLLM's mid-stream error.
func appendErrorEvent(b []byte, msg, typ string, code int) []byte {
	b = appendString(append(b, `data: {"error":{"message":`...), msg)
	b = appendString(append(b, `,"type":`...), typ)
	return fmt.Appendf(b, `,"param":null,"code":%d}}`+"\n\n", code)
}
