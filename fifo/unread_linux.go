package fifo

import (
	"errors"
	"fmt"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
	"golang.org/x/sys/unix"
)

// RemoveUnreadAt removes the FIFO name of d when nobody has it open for
// reading and it has not changed since before (its mtime and ctime are
// earlier): a FIFO its reader left behind for good. It reports whether it
// removed it. It never follows a symbolic link, and never removes anything
// but that FIFO: a link, a file, a directory or a FIFO with a reader is
// left as it is, and so is an entry that no longer names the FIFO looked
// at. Whether a FIFO has a reader is seen by opening it for writing without
// waiting (the kernel refuses with ENXIO when it has none); a FIFO the
// caller may not open is left, with the error. The short-lived write end
// is closed at once and writes nothing.
func RemoveUnreadAt(d *sharedir.Dir, name string, before time.Time) (bool, error) {
	h, err := pin(d, name)
	if err != nil {
		return false, err
	}
	defer h.close()
	if !changedBefore(&h.st, before) {
		return false, nil
	}
	fd, err := h.reopen(unix.O_WRONLY | unix.O_NONBLOCK)
	if err == nil {
		unix.Close(fd) // it has a reader
		return false, nil
	}
	if !errors.Is(err, unix.ENXIO) {
		return false, fmt.Errorf("look for a reader of fifo %s: %w", d.Join(name), err)
	}
	now, err := d.Stat(name)
	if err != nil || !sameFile(&now, &h.st) {
		return false, nil // gone or replaced meanwhile: not this FIFO any more
	}
	if err := d.Remove(name); err != nil {
		return false, err
	}
	return true, nil
}

// changedBefore reports whether both the data (mtime) and the inode
// (ctime) of st last changed before t.
func changedBefore(st *unix.Stat_t, t time.Time) bool {
	return time.Unix(st.Mtim.Unix()).Before(t) && time.Unix(st.Ctim.Unix()).Before(t)
}
