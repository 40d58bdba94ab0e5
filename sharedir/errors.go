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
)
