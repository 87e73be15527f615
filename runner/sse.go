package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode"
)

// This file is the one place that reads and bounds a server's event stream
// (text/event-stream): a data line is held up to maxSSELine; any other (a
// ":" keep-alive, "event:", "id:", …) is skipped as it passes, never held;
// and lines without data in a row are bounded by maxNoData, so a server
// cannot stall a stream while it seems to talk.

// maxSSELine bounds one data line: a chunk of a few tokens is a few hundred
// bytes; a megabyte is no chunk.
const maxSSELine = 1 << 20

// maxNoData bounds the bytes of lines without data a stream may send in a
// row: a server sends a keep-alive every few seconds, not megabytes of them.
const maxNoData = 1 << 20

const sseBuffer = 64 << 10 // the most of a line without data ever held

// sseReader reads an event stream's payloads.
type sseReader struct {
	r      *bufio.Reader
	noData int // bytes of lines without data since the last payload
}

func newSSEReader(body io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(body, sseBuffer)}
}

// next is the next payload; io.EOF after "data: [DONE]" or at the end. A
// line without the data field's name that is a JSON object is a payload
// too: some servers send an error that way. A line comes in parts of at
// most the buffer: a data line's are kept up to maxSSELine, any other's
// only counted against maxNoData.
func (s *sseReader) next() ([]byte, error) {
	for {
		line, err := s.r.ReadSlice('\n')
		if len(line) == 0 && err != nil {
			return nil, s.ended(err)
		}
		trimmed := bytes.TrimLeftFunc(line, unicode.IsSpace)
		data := bytes.HasPrefix(trimmed, []byte("data:")) || bytes.HasPrefix(trimmed, []byte("{"))
		if data && errors.Is(err, bufio.ErrBufferFull) {
			line = bytes.Clone(line) // the next part overwrites the buffer
		}
		for part := line; ; {
			if s.noData += len(part); !data && s.noData > maxNoData {
				return nil, fmt.Errorf("event stream: more than %s of comments and lines without data, and no data",
					byteSize(maxNoData))
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
			if part, err = s.r.ReadSlice('\n'); data && len(line)+len(part) > maxSSELine {
				return nil, fmt.Errorf("event stream: a data line is longer than %s", byteSize(maxSSELine))
			} else if data {
				line = append(line, part...)
			}
		}
		if err != nil && (!data || !errors.Is(err, io.EOF)) {
			return nil, s.ended(err) // a data line's last part may end without its newline
		}
		if !data {
			continue
		}
		s.noData = 0
		payload, _ := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		payload = bytes.TrimSpace(payload)
		switch {
		case string(payload) == "[DONE]":
			return nil, io.EOF
		case len(payload) > 0:
			return payload, nil
		}
	}
}

// ended is the error a stream ended with: io.EOF as it is, anything else
// said to be the event stream's.
func (s *sseReader) ended(err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return fmt.Errorf("event stream: %w", err)
}
