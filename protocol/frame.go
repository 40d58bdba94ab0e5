package protocol

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fifobridge/fifobridge/internal/jsonstr"
)

// Frame types of the exec-mode protocol.
const (
	FrameStart  = "start"
	FrameStdout = "stdout"
	FrameStderr = "stderr"
	FrameExit   = "exit"
	FrameError  = "error"
)

// Frame is one line the agent writes for a request. Decoding it with
// encoding/json turns data_b64 into bytes.
type Frame struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Pid        int    `json:"pid,omitempty"`
	Data       string `json:"data,omitempty"`
	DataB64    []byte `json:"data_b64,omitempty"`
	Code       *int   `json:"code,omitempty"`
	Signal     string `json:"signal,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Queued     bool   `json:"queued,omitempty"` // an ask timed out before its turn: nothing was sent
	Ready      bool   `json:"ready,omitempty"`
	Incomplete bool   `json:"incomplete,omitempty"` // an ask's input wanted more
	Status     *int   `json:"status,omitempty"`     // what its prompt's group "status" showed
	Canceled   bool   `json:"canceled,omitempty"`
	Killed     bool   `json:"killed,omitempty"`
	DurationMS *int64 `json:"duration_ms,omitempty"`
	Error      string `json:"error,omitempty"`
	// Prompt is the named groups of the prompt that ended an ask's turn.
	Prompt map[string]string `json:"prompt,omitempty"`
	// NotReady names a child that was not ready for an ask past its
	// limit, and quotes its last line.
	NotReady string `json:"not_ready,omitempty"`
	// Reused says an open found its session open already.
	Reused bool `json:"reused,omitempty"`
	// Sessions is the answer to a list: the status file's "sessions".
	Sessions json.RawMessage `json:"sessions,omitempty"`
	// Lost is how many bytes of the output a watcher lost (a lost frame).
	Lost int64 `json:"bytes,omitempty"`
}

// Bytes returns the payload of a stdout or stderr frame.
func (f *Frame) Bytes() []byte {
	if f.DataB64 != nil {
		return f.DataB64
	}
	return []byte(f.Data)
}

// AppendData appends a stdout or stderr frame carrying data, as "data"
// when it is valid UTF-8 and as "data_b64" otherwise, and a newline.
func AppendData(b []byte, id, typ string, data []byte) []byte {
	b = appendHead(b, id, typ)
	if utf8.Valid(data) {
		b = append(b, `,"data":`...)
		b = jsonstr.Append(b, data)
	} else {
		b = append(b, `,"data_b64":"`...)
		b = base64.StdEncoding.AppendEncode(b, data)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// AppendStart appends the frame that says the request's child started.
func AppendStart(b []byte, id string, pid int) []byte {
	b = appendHead(b, id, FrameStart)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	return append(b, "}\n"...)
}

// Exit is how a request ended, as its exit frame tells it.
type Exit struct {
	Code       int    // exit code, or 128+N for signal N
	Signal     string // name of the signal that ended it, or ""
	TimedOut   bool   // its time limit ended it
	Canceled   bool   // a cancel or its reader leaving ended it
	Killed     bool   // its stop had to escalate to SIGKILL
	DurationMS int64
}

// AppendExit appends the one exit frame of an accepted request.
func AppendExit(b []byte, id string, x Exit) []byte {
	b = appendHead(b, id, FrameExit)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(x.Code), 10)
	if x.Signal != "" {
		b = append(b, `,"signal":`...)
		b = jsonstr.Append(b, []byte(strings.ToValidUTF8(x.Signal, "\uFFFD")))
	}
	for _, flag := range []struct {
		set  bool
		name string
	}{{x.TimedOut, `,"timed_out":true`}, {x.Canceled, `,"canceled":true`}, {x.Killed, `,"killed":true`}} {
		if flag.set {
			b = append(b, flag.name...)
		}
	}
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, x.DurationMS, 10)
	return append(b, "}\n"...)
}

// AppendError appends the one error frame of a rejected request. A message
// that is not valid UTF-8 has its bad bytes replaced.
func AppendError(b []byte, id, msg string) []byte {
	b = appendHead(b, id, FrameError)
	b = append(b, `,"error":`...)
	b = jsonstr.Append(b, []byte(strings.ToValidUTF8(msg, "\uFFFD")))
	return append(b, "}\n"...)
}

func appendHead(b []byte, id, typ string) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, []byte(strings.ToValidUTF8(id, "\uFFFD")))
	b = append(b, `,"type":`...)
	return jsonstr.Append(b, []byte(strings.ToValidUTF8(typ, "\uFFFD")))
}

// CutIncompleteRune splits b before a UTF-8 sequence at its end that is cut
// short, so that a character split across two reads is sent whole.
func CutIncompleteRune(b []byte) (whole, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i], b[i:]
			}
			break
		}
	}
	return b, nil
}
