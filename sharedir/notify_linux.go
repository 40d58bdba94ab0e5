package sharedir

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/watch"
)

// Notify has fn told of the events of mask about d's entries (IN_CREATE,
// IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO, ...), through the agent's one
// inotify instance (package watch), until the watch is removed. The
// directory is added through d's descriptor, /proc/self/fd/N, which names
// the directory that was opened, wherever it was moved since, and never
// a path that could have been swapped for a link (IN_ONLYDIR refuses
// anything but a directory; IN_DONT_FOLLOW cannot be used, since the
// /proc link is itself a link). A unit's Dir is watched so through the
// descriptor opened for the call: the watch stays on the directory, which
// inotify holds by its inode. fn runs on the watch's reader: it must
// not block (see package watch). An event only says when to look again
// through d.
func (d *Dir) Notify(mask uint32, fn func(watch.Event)) (*watch.Watch, error) {
	var w *watch.Watch
	err := d.Use(func(fd int) (err error) {
		w, err = watch.Add("/proc/self/fd/"+strconv.Itoa(fd), mask|unix.IN_ONLYDIR, fn)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", d.path, err)
	}
	return w, nil
}

// NotifyEntry has fn told of the events of mask (IN_MODIFY, ...) of the
// regular file that d's entry name is now, as Notify does for d: the
// entry is opened with O_PATH and never followed, anything but a regular
// file is refused, and the watch stays on that file (also once it is
// renamed or replaced; a file deleted ends it with IN_IGNORED). No
// descriptor stays open.
func (d *Dir) NotifyEntry(name string, mask uint32, fn func(watch.Event)) (*watch.Watch, error) {
	fd, err := d.Openat(name, unix.O_PATH, 0)
	if err != nil {
		return nil, &os.PathError{Op: "watch", Path: d.Join(name), Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "watch", Path: d.Join(name), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "watch", Path: d.Join(name), Err: errors.New("not a regular file")}
	}
	w, err := watch.Add("/proc/self/fd/"+strconv.Itoa(fd), mask, fn)
	if err != nil {
		return nil, &os.PathError{Op: "watch", Path: d.Join(name), Err: err}
	}
	return w, nil
}
