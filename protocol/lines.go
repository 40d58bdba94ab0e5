package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
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

// readSize is how much a LineReader reads at once.
const readSize = 64 << 10

// keptLine is the longest line whose room a LineReader keeps for the next
// one: after a longer line it lets the room go.
const keptLine = 4 << 10

// Waiter is a reader that can wait until it has bytes without reading
// them (the agent's input FIFOs, fifo.Source).
type Waiter interface {
	WaitReadable() error
}

// readers pools the buffered readers of LineReaders over Waiters: one is
// held only from the moment bytes are there to read until all are read.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readSize) }}

// LineReader splits a stream into lines of at most a limit of bytes, however
// the writer split them. It never holds more than the limit of one line.
// Over a Waiter it holds no buffer while it waits for the next bytes (an
// idle session's ask FIFO), nor the room of a long line once it is read.
type LineReader struct {
	src  io.Reader     // nil when r was given (tests)
	r    *bufio.Reader // nil while it waits over a Waiter
	max  int
	line []byte
}

// NewLineReader reads lines of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	l := &LineReader{src: r, max: max}
	if _, ok := r.(Waiter); !ok {
		l.r = bufio.NewReaderSize(r, readSize)
	}
	return l
}

// Next returns the next line without its newline. The slice is valid until
// the next call. A line over the limit is skipped whole and reported as a
// *TooLongError; other errors come from the underlying reader.
func (l *LineReader) Next() ([]byte, error) {
	if cap(l.line) > keptLine {
		l.line = nil
	}
	l.line = l.line[:0]
	if err := l.fill(); err != nil {
		return nil, err
	}
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

// fill makes sure that the reader has its buffered reader. Over a Waiter,
// one that holds no bytes goes back to the pool first, and the next is
// taken once bytes are there to read.
func (l *LineReader) fill() error {
	w, ok := l.src.(Waiter)
	if !ok || (l.r != nil && l.r.Buffered() > 0) {
		return nil
	}
	if l.r != nil {
		l.r.Reset(nil)
		readers.Put(l.r)
		l.r = nil
	}
	if err := w.WaitReadable(); err != nil {
		return err
	}
	l.r = readers.Get().(*bufio.Reader)
	l.r.Reset(l.src)
	return nil
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
	var buffered []byte
	if l.r != nil {
		buffered, _ = l.r.Peek(l.r.Buffered())
	}
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
