//go:build linux

package tty

import (
	"fmt"
	"strconv"
	"strings"
)

// Winsize is a terminal's window size in character cells.
type Winsize struct {
	Cols, Rows uint16
}

func (w Winsize) String() string { return fmt.Sprintf("%dx%d", w.Cols, w.Rows) }

// ParseWinsize reads "COLSxROWS", both from 1 to 65535; spaces around it
// are ignored.
func ParseWinsize(s string) (Winsize, error) {
	c, r, ok := strings.Cut(strings.TrimSpace(s), "x")
	cols, err1 := strconv.ParseUint(c, 10, 16)
	rows, err2 := strconv.ParseUint(r, 10, 16)
	if !ok || err1 != nil || err2 != nil || cols == 0 || rows == 0 {
		return Winsize{}, fmt.Errorf("parse window size %q: want COLSxROWS, e.g. 80x24", s)
	}
	return Winsize{Cols: uint16(cols), Rows: uint16(rows)}, nil
}
