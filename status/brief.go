//go:build linux

package status

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/fifobridge/fifobridge/internal/jsonskim"
)

// Brief is what `fifobridge ls` shows of an open session.
type Brief struct {
	Name      string
	PID       int
	State     string
	StartedAt time.Time
	Restarts  int
	// Turn is the state of its conversation, "" without a prompt.
	Turn string
}

// Briefs decodes what ls shows of each session of a "sessions" array as
// the agent writes it (the status file's, a list's answer): only those
// members of each, the rest skimmed (package jsonskim), so that a list
// of many sessions costs its bytes' skim and not a decode of all of it.
// Keys are matched as the agent writes them.
func Briefs(sessions json.RawMessage) ([]Brief, error) {
	var out []Brief
	var err error
	n, serr := jsonskim.ElementMembers(sessions, func(n int, key, v []byte) {
		for len(out) <= n {
			out = append(out, Brief{})
		}
		if err == nil {
			err = out[n].take(key, v)
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	for len(out) < n { // sessions with no member: none the agent writes
		out = append(out, Brief{})
	}
	return out, nil
}

// take decodes the member key (as written) of a session into b, when ls
// shows it.
func (b *Brief) take(key, v []byte) error {
	var err error
	switch string(key) {
	case `"name"`:
		b.Name, err = jsonskim.Text(v)
	case `"pid"`:
		b.PID, err = number(v)
	case `"state"`:
		b.State, err = jsonskim.Text(v)
	case `"started_at"`:
		err = b.StartedAt.UnmarshalJSON(v)
	case `"restarts"`:
		b.Restarts, err = number(v)
	case `"turn"`:
		if state, found, ferr := jsonskim.Find(v, "state"); ferr == nil && found {
			b.Turn, err = jsonskim.Text(state)
		}
	}
	return err
}

// number decodes the JSON number v as an int.
func number(v []byte) (int, error) {
	if n, err := strconv.Atoi(string(v)); err == nil {
		return n, nil
	}
	var n int
	err := json.Unmarshal(v, &n)
	return n, err
}
