//go:build linux

package fifo

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fifobridge/fifobridge/sharedir"
)

// The tests of this package name FIFOs by path. These helpers resolve the
// path's directory and call the functions of the package on it, as the
// agent does with the directories it holds.

// Make makes a FIFO at path, as MakeAt does in the path's directory.
func Make(path string, perm os.FileMode) (created bool, err error) {
	d, err := sharedir.Enter(filepath.Dir(path))
	if err != nil {
		return false, fmt.Errorf("make fifo %s: %w", path, err)
	}
	defer d.Close()
	return MakeAt(d, filepath.Base(path), perm)
}

// OpenReaderNow opens the FIFO at path for reading without waiting for a
// writer.
func OpenReaderNow(path string) (*os.File, error) {
	return inParent(path, OpenReaderNowAt)
}

// OpenSource opens the FIFO at path as a Source that holds the path's
// directory, opened as sharedir.Open does, until it is closed.
func OpenSource(path string) (*Source, error) {
	s := &Source{}
	if err := s.openPath(path); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenSink opens the FIFO at path as a Sink that holds the path's
// directory until it is closed.
func OpenSink(path string) (*Sink, error) {
	s := &Sink{}
	if err := s.openPath(path); err != nil {
		return nil, err
	}
	return s, nil
}

// openPath opens the FIFO at path as e, with its directory opened for e.
func (e *endpoint) openPath(path string) error {
	d, err := sharedir.Open(filepath.Dir(path), false)
	if err != nil {
		return fmt.Errorf("open fifo %s: %w", path, err)
	}
	return e.openAt(d, filepath.Base(path), true)
}
