package fifo

import (
	"os"
	"sync"
)

// Source is the agent's reading end of an input FIFO. Writers may open and
// close the FIFO any number of times: because the Source also holds the FIFO
// open for writing, Read never returns io.EOF and never spins; it waits in
// the runtime poller until bytes arrive. Read and Close are safe to call from
// different goroutines; one Read runs at a time.
type Source struct {
	endpoint
	rmu  sync.Mutex
	last *os.File // the file Read used last; owned by Read
}

// OpenSource opens the existing FIFO at path as a Source. It never blocks.
func OpenSource(path string) (*Source, error) {
	s := &Source{endpoint: endpoint{path: path}}
	if err := s.open(); err != nil {
		return nil, err
	}
	s.last = s.cur
	return s, nil
}

// Read reads the next bytes written to the FIFO. After Reopen, bytes still
// buffered in the replaced FIFO are returned before those of the new one.
// It returns ErrClosed once Close was called.
func (s *Source) Read(p []byte) (int, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		f, err := s.current()
		if err != nil {
			return 0, err
		}
		if f != s.last {
			if n := readBuffered(s.last, p); n > 0 {
				return n, nil
			}
			s.last.Close()
			s.last = f
		}
		n, err := f.Read(p)
		if err != nil && os.IsTimeout(err) {
			continue // Reopen or Close woke us
		}
		if err != nil {
			if _, cerr := s.current(); cerr != nil {
				return n, cerr
			}
		}
		return n, err
	}
}

// Close closes the Source and wakes a blocked Read, which returns ErrClosed.
func (s *Source) Close() error {
	cur, err := s.closeCurrent()
	if err != nil {
		return err
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.last != cur {
		s.last.Close()
	}
	return nil
}
