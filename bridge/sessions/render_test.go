//go:build linux

package sessions

import (
	"encoding/json"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// A rewrite of the status file encodes again only the sessions that
// changed since the last one: with every session quiet, none (however
// many rewrites); after an ask of one, that one alone, the others' parts
// being the very bytes kept. What is written is what encoding every
// session afresh gives.
func TestStatusEncodesOnlyChangedSessions(t *testing.T) {
	h := startHarness(t, promptShell, nil)
	names := []string{"a", "b", "c", "d", "e", "f"}
	for _, name := range names {
		f := h.open(name, map[string]any{"prompt": `^> $`})
		require.Equal(t, protocol.FrameOpened, f.typ(), "%v", f)
	}
	quiet := func() {
		t.Helper()
		// The transcripts' counts move once their writers wrote the
		// prompts, which a busy machine may hold back past two quiet
		// rewrites: quiet is every session ready with its prompt
		// counted, then two rewrites in a row that encode nothing.
		require.Eventually(t, func() bool {
			var ss []status.Session
			if json.Unmarshal(h.e.Snapshot().SessionsJSON, &ss) != nil {
				return false // FailNow is not for Eventually's goroutine; the wait fails instead
			}
			for _, s := range ss {
				if s.Turn == nil || s.Turn.State != "ready" || s.Turn.Unready != nil ||
					s.Transcript == nil || s.Transcript.Written+s.Transcript.Dropped < uint64(len("> ")) {
					return false
				}
			}
			return len(ss) == len(names)
		}, 10*time.Second, time.Millisecond)
		require.Eventually(t, func() bool {
			before := h.encoded()
			h.e.Snapshot()
			return h.encoded() == before
		}, 10*time.Second, time.Millisecond)
	}
	quiet()
	encoded, kept := h.encoded(), h.parts()
	for range 20 {
		h.e.Snapshot()
	}
	require.Equal(t, encoded, h.encoded(), "quiet sessions are not encoded again")
	first, second := h.e.Snapshot().SessionsJSON, h.e.Snapshot().SessionsJSON
	require.True(t, unsafe.SliceData(first) == unsafe.SliceData(second), "nor is the array joined again")
	h.requireFresh()

	out, _ := h.ask("c", "echo hi")
	require.Equal(t, "hi\n", out)
	quiet()
	require.Greater(t, h.encoded(), encoded, "the session asked is encoded again")
	now := h.parts()
	for _, name := range names {
		if name == "c" {
			require.True(t, kept[name] != now[name], "the part of the session asked is new")
			continue
		}
		require.True(t, kept[name] == now[name], "the part of %s, which was not asked, is the one kept", name)
	}
	h.requireFresh()
	var ss []status.Session
	require.NoError(t, json.Unmarshal(h.e.Snapshot().SessionsJSON, &ss))
	require.Len(t, ss, len(names))
	require.Equal(t, uint64(1), ss[2].Turn.Answered, "the ask shows in the status")
}

// encoded counts the sessions' parts encoded so far.
func (h *harness) encoded() uint64 {
	h.e.render.mu.Lock()
	defer h.e.render.mu.Unlock()
	return h.e.render.encoded
}

// parts is where each session's part, as last encoded, is held (a
// pointer, which keeps it: a part encoded later is elsewhere).
func (h *harness) parts() map[string]*byte {
	h.e.render.mu.Lock()
	defer h.e.render.mu.Unlock()
	out := map[string]*byte{}
	all, _ := h.e.byName()
	for _, s := range all {
		out[s.name] = unsafe.SliceData(s.part.json)
	}
	return out
}

// requireFresh checks that the status's sessions, with quiet sessions,
// are what encoding each afresh gives, in the order of their names.
func (h *harness) requireFresh() {
	h.t.Helper()
	want, err := json.Marshal(asSessions(h.e.list()))
	require.NoError(h.t, err)
	require.Equal(h.t, string(want), string(h.e.Snapshot().SessionsJSON))
}
