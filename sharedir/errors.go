//go:build linux

package sharedir

import "errors"

var (
	// ErrSymlink is returned where a symbolic link is found that is not
	// followed: inside a Dir, or in a directory others can write.
	ErrSymlink = errors.New("symbolic link refused")

	// ErrBadName is returned for a name inside a Dir that is not a plain
	// name: empty, ".", "..", or containing "/".
	ErrBadName = errors.New("not a plain name")

	// ErrMoved is returned for a unit's directory (MakeUnit) whose name
	// no longer names the directory made: it was moved, removed or
	// replaced. Nothing is done in what is there now.
	ErrMoved = errors.New("no longer the directory made")

	// ErrOtherKind is returned where an entry is not of the kind a
	// unit's layout says (a file where a FIFO is expected): it is left.
	ErrOtherKind = errors.New("not of its kind")

	// ErrSwapped is returned by MakeFIFO when what its name named just
	// after it was made is not the FIFO made: it is left.
	ErrSwapped = errors.New("replaced while being made")
)
