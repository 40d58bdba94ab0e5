package status

import (
	"strconv"
	"time"

	"github.com/fifobridge/fifobridge/internal/jsonstr"
)

// AppendJSON appends s as JSON that decodes to what json.Marshal's
// encoding of s decodes to (a test holds it to that), without reflection: the agent writes the file as it
// starts and as it exits, and json.Marshal's first use of a type builds
// its encoder, a quarter of a millisecond of the start of `run -- true`.
func (s *Status) AppendJSON(b []byte) []byte {
	b = append(b, `{"pid":`...)
	b = strconv.AppendInt(b, int64(s.PID), 10)
	b = appendField(b, "mode", s.Mode)
	b = appendField(b, "state", s.State)
	b = appendTimeField(b, "started_at", s.StartedAt)
	b = appendTimeField(b, "updated_at", s.UpdatedAt)
	b = appendField(b, "in", s.In)
	b = appendField(b, "out", s.Out)
	if s.Containment != "" {
		b = appendField(b, "containment", s.Containment)
	}
	b = append(b, `,"fds":`...)
	b = strconv.AppendInt(b, int64(s.FDs), 10)
	b = append(b, `,"goroutines":`...)
	b = strconv.AppendInt(b, int64(s.Goroutines), 10)
	b = append(b, `,"child":{"pid":`...)
	c := &s.Child
	b = strconv.AppendInt(b, int64(c.PID), 10)
	b = append(b, `,"starts":`...)
	b = strconv.AppendInt(b, int64(c.Starts), 10)
	b = append(b, `,"restarts":`...)
	b = strconv.AppendInt(b, int64(c.Restarts), 10)
	b = append(b, `,"recent_restarts":`...)
	b = strconv.AppendInt(b, int64(c.RecentRestarts), 10)
	if c.RestartWindow != "" {
		b = appendField(b, "restart_window", c.RestartWindow)
	}
	b = append(b, `,"last_exit":`...)
	if e := c.LastExit; e == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"code":`...)
		b = strconv.AppendInt(b, int64(e.Code), 10)
		b = appendField(b, "signal", e.Signal)
		b = appendTimeField(b, "at", e.At)
		b = append(b, '}')
	}
	if t := c.TTY; t != nil {
		b = append(b, `,"tty":{"cols":`...)
		b = strconv.AppendInt(b, int64(t.Cols), 10)
		b = append(b, `,"rows":`...)
		b = strconv.AppendInt(b, int64(t.Rows), 10)
		b = append(b, '}')
	}
	if t := c.Turn; t != nil {
		b = append(b, `,"turn":{"state":`...)
		b = jsonstr.Append(b, jsonstr.Valid(t.State))
		b = append(b, `,"queued":`...)
		b = strconv.AppendInt(b, int64(t.Queued), 10)
		b = append(b, `,"answered":`...)
		b = strconv.AppendUint(b, t.Answered, 10)
		b = append(b, `,"timed_out":`...)
		b = strconv.AppendUint(b, t.TimedOut, 10)
		b = append(b, '}')
	}
	r := &s.Requests
	b = append(b, `},"requests":{"accepted":`...)
	b = strconv.AppendUint(b, r.Accepted, 10)
	b = append(b, `,"rejected":`...)
	b = strconv.AppendUint(b, r.Rejected, 10)
	b = append(b, `,"active":`...)
	b = strconv.AppendInt(b, r.Active, 10)
	b = append(b, `,"completed":`...)
	b = strconv.AppendUint(b, r.Completed, 10)
	b = append(b, '}')
	if t := s.Tee; t != nil {
		b = append(b, `,"tee":{"written":`...)
		b = strconv.AppendUint(b, t.Written, 10)
		b = append(b, `,"dropped":`...)
		b = strconv.AppendUint(b, t.Dropped, 10)
		b = append(b, '}')
	}
	if t := s.Transcript; t != nil {
		b = append(b, `,"transcript":{"written":`...)
		b = strconv.AppendUint(b, t.Written, 10)
		b = append(b, `,"dropped":`...)
		b = strconv.AppendUint(b, t.Dropped, 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendField appends ,"name":"value".
func appendField(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonstr.Append(b, jsonstr.Valid(value))
}

// appendTimeField appends ,"name":"RFC 3339 time", as time.Time's
// MarshalJSON does.
func appendTimeField(b []byte, name string, t time.Time) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':', '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
