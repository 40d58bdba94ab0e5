package bridge

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
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
	DurationMS *int64 `json:"duration_ms,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Bytes returns the payload of a stdout or stderr frame.
func (f *Frame) Bytes() []byte {
	if f.DataB64 != nil {
		return f.DataB64
	}
	return []byte(f.Data)
}

// appendDataFrame appends a stdout or stderr frame carrying data, as "data"
// when it is valid UTF-8 and as "data_b64" otherwise, and a newline.
func appendDataFrame(b []byte, id, typ string, data []byte) []byte {
	b = appendHead(b, id, typ)
	if utf8.Valid(data) {
		b = append(b, `,"data":`...)
		b = appendString(b, data)
	} else {
		b = append(b, `,"data_b64":"`...)
		b = base64.StdEncoding.AppendEncode(b, data)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

func appendStartFrame(b []byte, id string, pid int) []byte {
	b = appendHead(b, id, FrameStart)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	return append(b, "}\n"...)
}

func appendExitFrame(b []byte, id string, code int, signal string, timedOut bool, durationMS int64) []byte {
	b = appendHead(b, id, FrameExit)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	if signal != "" {
		b = append(b, `,"signal":`...)
		b = appendString(b, []byte(signal))
	}
	if timedOut {
		b = append(b, `,"timed_out":true`...)
	}
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, durationMS, 10)
	return append(b, "}\n"...)
}

func appendErrorFrame(b []byte, id, msg string) []byte {
	b = appendHead(b, id, FrameError)
	b = append(b, `,"error":`...)
	b = appendString(b, []byte(msg))
	return append(b, "}\n"...)
}

func appendHead(b []byte, id, typ string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, []byte(id))
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	return append(b, '"')
}

// appendString appends s, valid UTF-8, as a JSON string. Only what JSON
// requires is escaped: quote, backslash and control characters.
func appendString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// cutIncompleteRune splits b before a UTF-8 sequence at its end that is cut
// short, so that a character split across two reads is sent whole.
func cutIncompleteRune(b []byte) (whole, rest []byte) {
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
