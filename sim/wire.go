package sim

import (
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

// appendChunkHead starts a chat.completion.chunk up to its choices array.
func appendChunkHead(b []byte, id string, created int64, model string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, model)
	return append(b, `,"choices":`...)
}

// usage is the token counts a chunk reports.
type usage struct {
	prompt, completion, reasoning int
}

func appendUsage(b []byte, u usage, details bool) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt+u.completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.completion), 10)
	if details && u.reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(u.reasoning), 10)
		b = append(b, '}')
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
	b = append(b, "data: "...)
	b = appendChunkHead(b, id, created, model)
	b = append(b, `[{"index":0,"delta":{`...)
	if d.role != "" {
		b = append(b, `"role":`...)
		b = appendString(b, d.role)
		b = append(b, `,"content":""`...)
	} else {
		b = appendString(b, d.field)
		b = append(b, ':')
		b = appendString(b, d.text)
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	if d.finish == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, d.finish)
		b = append(b, `,"stop_reason":null`...)
	}
	b = append(b, "}]"...)
	if d.usage != nil {
		b = append(b, ',')
		b = appendUsage(b, *d.usage, false)
	}
	return append(b, "}\n\n"...)
}

// appendUsageChunk is the final chunk of include_usage: no choices, usage.
func appendUsageChunk(b []byte, id string, created int64, model string, u usage) []byte {
	b = append(b, "data: "...)
	b = appendChunkHead(b, id, created, model)
	b = append(b, "[],"...)
	b = appendUsage(b, u, true)
	return append(b, "}\n\n"...)
}

// appendErrorEvent is vLLM's mid-stream error.
func appendErrorEvent(b []byte, msg, typ string, code int) []byte {
	b = append(b, `data: {"error":{"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"param":null,"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	return append(b, "}}\n\n"...)
}
