package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode"
)

// An event stream (text/event-stream) is lines: "data: …" carries a
// payload, ":" begins a comment (a keep-alive), and "event:", "id:",
// "retry:" or a field no one knows carry nothing the runner reads. This
// file is the one place that reads a server's event stream, and the one
// place that bounds it: a data line is held up to maxSSELine; every other
// line is skipped as it passes, never held, so its length costs nothing
// but the reader's buffer; and lines without data in a row are bounded by
// maxNoData, so a server cannot stall a stream while it seems to talk.

// maxSSELine bounds one data line: a chunk of a few tokens is a few hundred
// bytes; a megabyte is no chunk.
const maxSSELine = 1 << 20

// maxNoData bounds the bytes of lines without data a stream may send in a
// row: a server sends a keep-alive every few seconds, not megabytes of them.
const maxNoData = 1 << 20

// sseBuffer is the reader's buffer: the most of a line that is not data it
// ever holds.
const sseBuffer = 64 << 10

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
// too: some servers send an error that way.
func (s *sseReader) next() ([]byte, error) {
	for {
		head, err := s.r.ReadSlice('\n')
		if len(head) == 0 && err != nil {
			return nil, s.ended(err)
		}
		trimmed := bytes.TrimLeftFunc(head, unicode.IsSpace)
		if !bytes.HasPrefix(trimmed, []byte("data:")) && !bytes.HasPrefix(trimmed, []byte("{")) {
			if err := s.skip(head, err); err != nil {
				return nil, err
			}
			continue
		}
		line, err := s.rest(head, err)
		if err != nil {
			return nil, err
		}
		s.noData = 0
		line = bytes.TrimSpace(line)
		payload, _ := bytes.CutPrefix(line, []byte("data:"))
		payload = bytes.TrimSpace(payload)
		switch {
		case string(payload) == "[DONE]":
			return nil, io.EOF
		case len(payload) > 0:
			return payload, nil
		}
	}
}

// skip passes over a line without data, head its first part as read, and
// counts it against maxNoData.
func (s *sseReader) skip(head []byte, err error) error {
	for {
		s.noData += len(head)
		if s.noData > maxNoData {
			return fmt.Errorf("event stream: more than %s of comments and lines without data, and no data", byteSize(maxNoData))
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err != nil {
				return s.ended(err)
			}
			return nil
		}
		head, err = s.r.ReadSlice('\n')
	}
}

// rest reads the rest of a data line whose first part is head, up to
// maxSSELine bytes in all.
func (s *sseReader) rest(head []byte, err error) ([]byte, error) {
	if !errors.Is(err, bufio.ErrBufferFull) {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, s.ended(err)
		}
		return head, nil // a whole line, or the last one without its newline
	}
	line := bytes.Clone(head)
	for errors.Is(err, bufio.ErrBufferFull) {
		if head, err = s.r.ReadSlice('\n'); len(line)+len(head) > maxSSELine {
			return nil, fmt.Errorf("event stream: a data line is longer than %s", byteSize(maxSSELine))
		}
		line = append(line, head...)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, s.ended(err)
	}
	return line, nil
}

// ended is the error a stream ended with: io.EOF as it is, anything else
// said to be the event stream's.
func (s *sseReader) ended(err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return fmt.Errorf("event stream: %w", err)
}
