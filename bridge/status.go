package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Status is the content of the status file. Its JSON form is part of the
// external contract.
type Status struct {
	PID       int       `json:"pid"`
	Mode      string    `json:"mode"`
	State     string    `json:"state"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	In        string    `json:"in"`
	Out       string    `json:"out"`
	FDs       int       `json:"fds"`
	// Goroutines is the agent's goroutine count, for leak checks; not part
	// of the contract.
	Goroutines int         `json:"goroutines"`
	Child      ChildStatus `json:"child"`
	Requests   Requests    `json:"requests"`
}

// ChildStatus describes the supervised child (stream mode).
type ChildStatus struct {
	PID      int       `json:"pid"`
	Starts   int       `json:"starts"`
	Restarts int       `json:"restarts"`
	LastExit *LastExit `json:"last_exit"`
}

// LastExit is how the last child ended.
type LastExit struct {
	Code   int       `json:"code"`
	Signal string    `json:"signal"`
	At     time.Time `json:"at"`
}

// Requests counts exec-mode requests.
type Requests struct {
	Accepted  uint64 `json:"accepted"`
	Rejected  uint64 `json:"rejected"`
	Active    int64  `json:"active"`
	Completed uint64 `json:"completed"`
}

// statusInterval is how often the status file is rewritten; the contract
// asks for at least every 5 s and health calls 15 s stale.
const statusInterval = 2 * time.Second

// statusWriter rewrites the status file from snapshot every statusInterval
// and whenever poke is called, until ctx is done.
type statusWriter struct {
	path     string
	snapshot func() Status
	poke     chan struct{}
}

func newStatusWriter(path string, snapshot func() Status) *statusWriter {
	return &statusWriter{path: path, snapshot: snapshot, poke: make(chan struct{}, 1)}
}

// Poke asks for a rewrite soon, without blocking.
func (w *statusWriter) Poke() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// statusCoalesce is the least time between two writes that changes ask
// for: under a burst of exec requests, the file is rewritten at most this
// often, not once per request.
const statusCoalesce = 50 * time.Millisecond

func (w *statusWriter) run(ctx context.Context) {
	t := time.NewTicker(statusInterval)
	defer t.Stop()
	for {
		w.write()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.poke:
			select {
			case <-ctx.Done():
				return
			case <-time.After(statusCoalesce):
			}
		}
	}
}

func (w *statusWriter) write() error {
	s := w.snapshot()
	s.UpdatedAt = time.Now().UTC()
	return WriteStatus(w.path, s)
}

// WriteStatus replaces the file at path with s atomically: readers see the
// old content or the new, never a part.
func WriteStatus(path string, s Status) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("write status %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".status-*.tmp")
	if err != nil {
		return fmt.Errorf("write status %s: %w", path, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write status %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write status %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write status %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write status %s: %w", path, err)
	}
	renamed = true
	return nil
}

// ReadStatus reads the status file at path.
func ReadStatus(path string) (Status, error) {
	var s Status
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read status: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("read status %s: %w", path, err)
	}
	return s, nil
}
