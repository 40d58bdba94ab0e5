//go:build linux

package fifo

// Unnamed returns err as an error whose text names no path: op, then the
// innermost error err wraps (an errno, ErrNoReader, ErrNotFIFO, ...),
// which errors.Is and errors.As still find. A reply FIFO's name is its
// sender's secret (where the agent is another non-root user, the only key
// to it), and errors about one reach the log and, for a request that
// names no usable reply FIFO, the output FIFO, which other users read.
func Unnamed(op string, err error) error {
	if err == nil {
		return nil
	}
	return &unnamedError{op: op, err: err}
}

type unnamedError struct {
	op  string
	err error
}

func (e *unnamedError) Error() string { return e.op + ": " + innermost(e.err).Error() }
func (e *unnamedError) Unwrap() error { return e.err }

// innermost is the last error of err's chain (of a join, the first's).
func innermost(err error) error {
	for {
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				err = next
				continue
			}
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 && errs[0] != nil {
				err = errs[0]
				continue
			}
		}
		return err
	}
}
