package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Request is one exec-mode request, as a JSON object on one line.
// Its fields encode in this order, id and reply first, so that even a line
// too long to accept can be answered on its reply FIFO.
type Request struct {
	ID       string   `json:"id,omitempty"`
	Reply    string   `json:"reply,omitempty"`
	Timeout  string   `json:"timeout,omitempty"`
	Args     []string `json:"args,omitempty"`
	Stdin    string   `json:"stdin,omitempty"`
	StdinB64 []byte   `json:"stdin_b64,omitempty"`
}

// ValidReplyName reports whether name may name a reply FIFO inside
// DIR/replies: 1 to 128 of [A-Za-z0-9._-], not "." or "..". (Written out
// rather than as a regular expression, whose {1,128} took 1.4 ms to
// compile at every start.)
func ValidReplyName(name string) bool {
	if len(name) == 0 || len(name) > 128 || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// parsedRequest is a request line understood, with its stdin in bytes.
type parsedRequest struct {
	Request
	stdin   []byte
	timeout time.Duration
}

// parseRequest reads one request line (without its newline). A line that
// begins with '{' is a JSON object; any other line is plain text whose bytes
// plus "\n" are the stdin. On error the returned request still carries the id
// and reply the line named, when it could be read that far.
func parseRequest(line []byte) (parsedRequest, error) {
	var r parsedRequest
	if len(line) == 0 || line[0] != '{' {
		r.stdin = append(append(make([]byte, 0, len(line)+1), line...), '\n')
		return r, nil
	}
	if err := json.Unmarshal(line, &r.Request); err != nil {
		// Salvage the id and reply, so the error reaches the right reader.
		var head struct{ ID, Reply string }
		if json.Unmarshal(line, &head) == nil {
			r.ID, r.Reply = head.ID, head.Reply
		}
		return r, fmt.Errorf("invalid request: %s", jsonError(err))
	}
	if r.Reply != "" && !ValidReplyName(r.Reply) {
		name := r.Reply
		r.Reply = ""
		return r, fmt.Errorf("invalid reply name %q: want 1 to 128 of A-Z a-z 0-9 . _ - naming a fifo in replies/", name)
	}
	if r.Stdin != "" && r.StdinB64 != nil {
		return r, errors.New("invalid request: give stdin or stdin_b64, not both")
	}
	r.stdin = []byte(r.Stdin)
	if r.StdinB64 != nil {
		r.stdin = r.StdinB64
	}
	if r.Timeout != "" {
		d, err := time.ParseDuration(r.Timeout)
		if err != nil || d <= 0 {
			return r, fmt.Errorf("invalid timeout %q: want a positive duration such as 5s", r.Timeout)
		}
		r.timeout = d
	}
	return r, nil
}

func jsonError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("bad JSON at byte %d: %v", se.Offset, err)
	}
	return err.Error()
}

// errTooLong reports a request line longer than the limit; the line has
// been read and discarded up to its newline, all but its head.
type errTooLong struct {
	limit int
	head  []byte // the line's first bytes, to find its id and reply
}

// headLen is how much of a too-long line is kept to answer it.
const headLen = 1024

// salvageHead reads the id and reply of a request from the first bytes of
// its line, as far as they are members that come before the line was cut.
func salvageHead(head []byte) (id, reply string) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return id, reply
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return id, reply
		}
		switch key {
		case "id":
			json.Unmarshal(v, &id)
		case "reply":
			json.Unmarshal(v, &reply)
		}
	}
	return id, reply
}

func (e errTooLong) Error() string {
	return fmt.Sprintf("request exceeds -max-request (%d bytes)", e.limit)
}

// lineReader splits a stream into lines of at most max bytes, however the
// writer split them. It never holds more than max bytes of one line.
type lineReader struct {
	r    *bufio.Reader
	max  int
	line []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. The slice is valid until
// the next call. A line over max is skipped whole and reported as
// errTooLong; other errors come from the underlying reader.
func (l *lineReader) next() ([]byte, error) {
	l.line = l.line[:0]
	var head []byte // set once the line is known to be too long
	for {
		chunk, err := l.r.ReadSlice('\n')
		if head == nil && (len(l.line)+len(chunk) > l.max+1 || (len(l.line)+len(chunk) == l.max+1 && !bytes.HasSuffix(chunk, []byte{'\n'}))) {
			head = append(l.line, chunk...)
			head = append([]byte(nil), head[:min(len(head), headLen)]...)
			l.line = l.line[:0]
		} else if head == nil {
			l.line = append(l.line, chunk...)
		}
		switch {
		case err == nil:
			if head != nil {
				return nil, errTooLong{limit: l.max, head: head}
			}
			return l.line[:len(l.line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// rest returns what the reader holds beyond the lines it returned: a line
// cut short, and bytes read ahead.
func (l *lineReader) rest() []byte {
	buffered, _ := l.r.Peek(l.r.Buffered())
	return append(append([]byte(nil), l.line...), buffered...)
}

// splitLines returns the complete lines in b, without their newlines.
func splitLines(b []byte) [][]byte {
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
