package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// TooLongError reports a request line longer than the limit. The line has
// been read and discarded up to its newline, all but its head.
type TooLongError struct {
	Limit int
	Head  []byte // the line's first bytes, to find its id and reply
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("request exceeds -max-request (%d bytes)", e.Limit)
}

// headLen is how much of a too-long line is kept to answer it: enough for an
// id of MaxIDLen and a reply name, escaped.
const headLen = 4096

// LineReader splits a stream into lines of at most a limit of bytes, however
// the writer split them. It never holds more than the limit of one line.
type LineReader struct {
	r    *bufio.Reader
	max  int
	line []byte
}

// NewLineReader reads lines of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its newline. The slice is valid until
// the next call. A line over the limit is skipped whole and reported as a
// *TooLongError; other errors come from the underlying reader.
func (l *LineReader) Next() ([]byte, error) {
	l.line = l.line[:0]
	var head []byte // set once the line is known to be too long
	for {
		chunk, err := l.r.ReadSlice('\n')
		if head == nil && l.over(chunk) {
			head = append(l.line, chunk...)
			head = append([]byte(nil), head[:min(len(head), headLen)]...)
			l.line = l.line[:0]
		} else if head == nil {
			l.line = append(l.line, chunk...)
		}
		switch {
		case err == nil:
			if head != nil {
				return nil, &TooLongError{Limit: l.max, Head: head}
			}
			return l.line[:len(l.line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// Each calls take with every line until the underlying reader fails (its
// end, or a close that ends its Read): with the line, or with nil and the
// *TooLongError that stands for a line over the limit. It is the loop of
// every FIFO the agent reads requests from; what is left after the last
// line is Rest.
func (l *LineReader) Each(take func(line []byte, tooLong error)) {
	for {
		line, err := l.Next()
		var tooLong *TooLongError
		if err != nil && !errors.As(err, &tooLong) {
			return
		}
		take(line, err)
	}
}

// over reports whether the line so far plus chunk is more than the limit,
// not counting a final newline.
func (l *LineReader) over(chunk []byte) bool {
	n := len(l.line) + len(chunk)
	if bytes.HasSuffix(chunk, []byte{'\n'}) {
		n--
	}
	return n > l.max
}

// Rest returns what the reader holds beyond the lines it returned: a line
// cut short, and bytes read ahead.
func (l *LineReader) Rest() []byte {
	buffered, _ := l.r.Peek(l.r.Buffered())
	return append(append([]byte(nil), l.line...), buffered...)
}

// SplitLines returns the complete lines in b, without their newlines; a
// last line without a newline is left out.
func SplitLines(b []byte) [][]byte {
	var lines [][]byte
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return lines
		}
		lines = append(lines, b[:i])
		b = b[i+1:]
	}
}
