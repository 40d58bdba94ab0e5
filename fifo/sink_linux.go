package fifo

import (
	"os"
	"sync"
)

// Sink is the agent's writing end of an output FIFO. Because the Sink also
// holds the FIFO open for reading, a reader that goes away never causes
// EPIPE or lost bytes: what was written and not yet read stays in the pipe
// buffer for the next reader, and when the buffer is full Write waits
// (backpressure). Write and Close are safe to call from different goroutines;
// one Write runs at a time, so a Write is never interleaved with another.
type Sink struct {
	endpoint
	wmu  sync.Mutex
	last *os.File // the file Write used last; owned by Write
}

// OpenSink opens the existing FIFO at path as a Sink. It never blocks.
func OpenSink(path string) (*Sink, error) {
	s := &Sink{endpoint: endpoint{path: path}}
	if err := s.open(); err != nil {
		return nil, err
	}
	s.last = s.cur
	return s, nil
}

// Write writes all of p, waiting while the FIFO is full. After Reopen, bytes
// that no reader had taken from the replaced FIFO are moved to the new one
// first, so nothing is lost or repeated. It returns ErrClosed once Close was
// called.
func (s *Sink) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.write(p)
}

func (s *Sink) write(p []byte) (int, error) {
	written := 0
	for {
		f, err := s.current()
		if err != nil {
			return written, err
		}
		if f != s.last {
			carried := Drain(s.last)
			s.last.Close()
			s.last = f
			if _, err := s.write(carried); err != nil {
				return written, err
			}
			continue
		}
		if written == len(p) {
			return written, nil
		}
		n, err := f.Write(p[written:])
		written += n
		if err != nil && os.IsTimeout(err) {
			continue // Reopen or Close woke us
		}
		if err != nil {
			if _, cerr := s.current(); cerr != nil {
				return written, cerr
			}
		}
		return written, err
	}
}

// Close closes the Sink and wakes a blocked Write, which returns ErrClosed.
// Bytes still in the pipe buffer stay there for as long as a reader has the
// FIFO open.
func (s *Sink) Close() error {
	cur, err := s.closeCurrent()
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.last != cur {
		s.last.Close()
	}
	return nil
}
