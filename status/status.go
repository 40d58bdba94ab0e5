package status

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

// Interval is how often the status file is rewritten; the contract
// asks for at least every 5 s and health calls 15 s stale.
const Interval = 2 * time.Second

// Writer rewrites the status file from a snapshot function every Interval
// and whenever Poke is called, until the context given to Run is done.
type Writer struct {
	path     string
	snapshot func() Status
	poke     chan struct{}
}

// NewWriter returns a Writer of the status file at path.
func NewWriter(path string, snapshot func() Status) *Writer {
	return &Writer{path: path, snapshot: snapshot, poke: make(chan struct{}, 1)}
}

// Poke asks for a rewrite soon, without blocking.
func (w *Writer) Poke() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// coalesce is the least time between two writes that changes ask
// for: under a burst of exec requests, the file is rewritten at most this
// often, not once per request.
const coalesce = 50 * time.Millisecond

// Run writes the file until ctx is done; it writes once at once.
func (w *Writer) Run(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		w.Write()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.poke:
			select {
			case <-ctx.Done():
				return
			case <-time.After(coalesce):
			}
		}
	}
}

// Write writes the file now.
func (w *Writer) Write() error {
	s := w.snapshot()
	s.UpdatedAt = time.Now().UTC()
	return Write(w.path, s)
}

// Write replaces the file at path with s atomically: readers see the
// old content or the new, never a part.
func Write(path string, s Status) error {
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

// Read reads the status file at path.
func Read(path string) (Status, error) {
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
