package sharedir

import (
	"fmt"
	"strconv"

	"github.com/fsnotify/fsnotify"
)

// Watch adds d to w through d's descriptor: the /proc/self/fd link names
// the directory that was opened, never a path that could be swapped for a
// link since. It returns the name w knows the watch by, for w.Remove; an
// event about an entry of d is named that, a "/" and the entry's name.
// Events only say when to look again: what is there is looked at through
// d, which never follows a link.
func (d *Dir) Watch(w *fsnotify.Watcher) (string, error) {
	if d.f == nil {
		// The name would be that of a descriptor closed after the call.
		return "", fmt.Errorf("watch %s: a unit's directory is watched with Notify", d.path)
	}
	name := "/proc/self/fd/" + strconv.Itoa(d.Fd())
	if err := w.Add(name); err != nil {
		return "", fmt.Errorf("watch %s: %w", d.path, err)
	}
	return name, nil
}
