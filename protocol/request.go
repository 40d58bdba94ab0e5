package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/internal/jsonstr"
)

// MaxIDLen is the longest request id accepted, in bytes.
const MaxIDLen = 256

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
	// Cancel, when set, makes the line a cancel of the request with this
	// id, not a request.
	Cancel string `json:"cancel,omitempty"`
}

// Parsed is a request line understood: its stdin in bytes and its time
// limit as a duration (0: none given).
type Parsed struct {
	Request
	Stdin   []byte
	Limit   time.Duration
	IsPlain bool // the line was plain text, not JSON
	// IsCancel says the line is {"cancel":"ID"}: a cancel of request ID,
	// which is then also the ID its answer carries.
	IsCancel bool
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

// IsBlank reports whether line (without its newline) is empty or only
// spaces, tabs and carriage returns: such a line is not a request.
func IsBlank(line []byte) bool {
	return len(bytes.Trim(line, " \t\r")) == 0
}

// ParseRequest reads one request line (without its newline). A line that
// begins with '{' is a JSON object; any other line is plain text whose bytes
// plus "\n" are the stdin. On error the returned request still carries the
// id and reply the line named, as far as they could be read and are valid,
// so that the error reaches the right reader.
//
// A line that may hold another writer's bytes (one not matching its
// seal, or giving a key twice) is refused with an error that wraps
// ErrDamaged; the id and reply it returns then are those of the line's
// first MaxUnsealed bytes. A line without a seal is taken at any length
// (see seal.go).
func ParseRequest(line []byte) (Parsed, error) {
	var r Parsed
	if len(line) == 0 || line[0] != '{' {
		r.IsPlain = true
		r.Stdin = append(append(make([]byte, 0, len(line)+1), line...), '\n')
		return r, nil
	}
	req, err := decodeLine[Request](line, "request")
	if err != nil {
		r.ID, r.Reply = SalvageHead(line)
		return r, err
	}
	r.Request = req
	if r.Cancel != "" {
		return parseCancel(r)
	}
	if err := checkHead(&r.Request); err != nil {
		return r, err
	}
	if r.Request.Stdin != "" && r.StdinB64 != nil {
		return r, errors.New("invalid request: give stdin or stdin_b64, not both")
	}
	r.Stdin = []byte(r.Request.Stdin)
	if r.StdinB64 != nil {
		r.Stdin = r.StdinB64
	}
	if r.Timeout != "" {
		d, err := time.ParseDuration(r.Timeout)
		if err != nil || d <= 0 {
			return r, fmt.Errorf("invalid timeout %q: want a positive duration such as 5s", r.Timeout)
		}
		r.Limit = d
	}
	return r, nil
}

// parseCancel finishes a cancel line: its answer carries the id canceled,
// and goes to the reply FIFO the line names, if any.
func parseCancel(r Parsed) (Parsed, error) {
	r.IsCancel = true
	r.ID = r.Cancel
	if len(r.Cancel) > MaxIDLen {
		r.IsCancel = false
		r.Cancel = ""
	}
	err := checkHead(&r.Request)
	if err != nil {
		r.IsCancel, r.Cancel = false, ""
	}
	return r, err
}

// AppendCancel appends the line that cancels request id, and a newline.
func AppendCancel(b []byte, id string) []byte {
	b = append(b, `{"cancel":`...)
	b = jsonstr.Append(b, []byte(strings.ToValidUTF8(id, "\uFFFD")))
	return append(b, "}\n"...)
}

// checkHead refuses an id over MaxIDLen and a bad reply name, clearing them
// so that neither is echoed or used.
func checkHead(r *Request) error {
	if len(r.ID) > MaxIDLen {
		n := len(r.ID)
		r.ID = ""
		if !ValidReplyName(r.Reply) {
			r.Reply = ""
		}
		return fmt.Errorf("invalid request: id is %d bytes, more than %d", n, MaxIDLen)
	}
	if r.Reply != "" && !ValidReplyName(r.Reply) {
		name := r.Reply
		r.Reply = ""
		if len(name) > 2*MaxIDLen {
			name = name[:MaxIDLen] + "..."
		}
		return fmt.Errorf("invalid reply name %q: want 1 to 128 of A-Z a-z 0-9 . _ - naming a fifo in replies/", name)
	}
	return nil
}

// jsonError says what is wrong with a line in the protocol's terms, without
// Go type names.
func jsonError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var be base64.CorruptInputError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("bad JSON at byte %d", se.Offset)
	case errors.As(err, &be):
		return fmt.Sprintf(`field "stdin_b64" is not valid base64 (at byte %d)`, int64(be))
	case errors.As(err, &te) && te.Field == "args" && te.Type.Kind() != reflect.String:
		return fmt.Sprintf(`field "args" must be an array of strings, not a JSON %s`, te.Value)
	case errors.As(err, &te) && strings.HasPrefix(te.Field, "args"):
		return fmt.Sprintf(`field "args" must hold only strings, not a JSON %s`, te.Value)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("field %q must be %s, not a JSON %s", te.Field, jsonKind(te.Type), te.Value)
	case errors.As(err, &te):
		return fmt.Sprintf("want a JSON object, not a %s", te.Value)
	}
	return "bad JSON"
}

// jsonKind names, in JSON's terms, what a field of Go type t takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	}
	return "a number"
}

// SalvageHead reads the id and reply of a request from the start of its
// line, member by member, as far as the line is well formed: a line cut
// short, or broken after those members, still names where its answer goes.
// It reads only the line's first MaxUnsealed bytes, which a client writes
// in one atomic write (WireLine), and takes the first member that
// encoding/json would take for each, so that no other writer's bytes
// name them. An id over MaxIDLen or an invalid reply name is not returned.
func SalvageHead(line []byte) (id, reply string) {
	line = line[:min(len(line), MaxUnsealed)]
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", ""
	}
	var haveID, haveReply bool
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		tok, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := key.(string)
		s, isString := tok.(string)
		switch {
		case !isString:
			if d, ok := tok.(json.Delim); ok && (d == '[' || d == '{') {
				return clean(id, reply) // nested values: give up here
			}
		case !haveID && foldKey(k) == "ID":
			id, haveID = s, true
		case !haveReply && foldKey(k) == "REPLY":
			reply, haveReply = s, true
		}
	}
	return clean(id, reply)
}

// checkKeys refuses, as damaged, a JSON object that gives a key twice.
func checkKeys(obj []byte) error {
	key, dup := duplicateKey(obj)
	if !dup {
		return nil
	}
	if len(key) > 64 {
		key = key[:64] + "..."
	}
	return fmt.Errorf("%w: key %q given twice", ErrDamaged, key)
}

func clean(id, reply string) (string, string) {
	if len(id) > MaxIDLen {
		id = ""
	}
	if !ValidReplyName(reply) {
		reply = ""
	}
	return id, reply
}
