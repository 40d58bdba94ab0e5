//go:build linux

package watch

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Event is one event of a watched object.
type Event struct {
	// Mask holds the event's IN_ bits: one of the watch's mask, or
	// IN_Q_OVERFLOW (events were lost) or IN_IGNORED (the watch ended).
	Mask uint32
	// Name is the entry of a watched directory the event is about; ""
	// when it is about the object itself.
	Name string
}

// Watch is one watch of an object: its func is told the object's events
// until Remove.
type Watch struct {
	obj  *object
	mask uint32
	fn   func(Event)
}

// object is one kernel watch (one wd), shared by the watches of one
// inode.
type object struct {
	wd      int32
	mask    uint32 // the kernel watch's mask: the union of the watches'
	watches map[*Watch]struct{}
	gone    bool // IN_IGNORED came: the kernel ended the watch
}

// instance is the process's inotify instance.
type instance struct {
	f *os.File

	mu      sync.Mutex // held by Add, Remove and each event's dispatch
	objects map[int32]*object
	broken  error // the reader ended: no Add succeeds
}

var (
	startOnce sync.Once
	the       *instance
	startErr  error
)

// readSize is the reader's buffer: room for 16 events with the longest
// names, many more with short ones.
const readSize = 16 * (unix.SizeofInotifyEvent + unix.NAME_MAX + 1)

// Start makes the process's instance and its reader goroutine, if that
// was not done yet, and returns why it could not be. Add calls it; tests
// call it before they count descriptors and goroutines.
func Start() error {
	startOnce.Do(func() {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			startErr = fmt.Errorf("make inotify instance: %w", err)
			return
		}
		// Non-blocking: the runtime's poller waits for it.
		the = &instance{f: os.NewFile(uintptr(fd), "inotify"), objects: map[int32]*object{}}
		go the.read()
	})
	return startErr
}

// Add watches path for the events of mask (IN_ bits; IN_ONLYDIR and
// IN_DONT_FOLLOW apply to this call) and calls fn with each, on the
// reader goroutine (see the package doc), until Remove.
func Add(path string, mask uint32, fn func(Event)) (*Watch, error) {
	if err := Start(); err != nil {
		return nil, err
	}
	return the.add(path, mask, fn)
}

// addFlags are the bits of a mask that steer inotify_add_watch and are
// no events.
const addFlags = unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK | unix.IN_MASK_ADD | unix.IN_ONESHOT | unix.IN_MASK_CREATE

func (in *instance) add(path string, mask uint32, fn func(Event)) (*Watch, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.broken != nil {
		return nil, in.broken
	}
	// IN_MASK_ADD: another watch of the same inode keeps its events.
	wd, err := unix.InotifyAddWatch(in.fd(), path, mask|unix.IN_MASK_ADD)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	events := mask &^ addFlags
	o := in.objects[int32(wd)]
	if o == nil {
		o = &object{wd: int32(wd), watches: map[*Watch]struct{}{}}
		in.objects[int32(wd)] = o
	}
	o.mask |= events
	w := &Watch{obj: o, mask: events, fn: fn}
	o.watches[w] = struct{}{}
	return w, nil
}

// Remove ends the watch: once it returns, its func is not called any
// more, and none is under way. The kernel's watch goes with the last
// watch of its object. Remove may be called more than once, also after
// the watch ended by itself (IN_IGNORED).
func (w *Watch) Remove() {
	in := the
	in.mu.Lock()
	defer in.mu.Unlock()
	o := w.obj
	if _, ok := o.watches[w]; !ok {
		return
	}
	delete(o.watches, w)
	if len(o.watches) > 0 || o.gone {
		return
	}
	delete(in.objects, o.wd)
	// Its IN_IGNORED comes later and finds no object. A watch of the same
	// inode added meanwhile is a new kernel watch with a new wd.
	unix.InotifyRmWatch(in.fd(), uint32(o.wd))
}

// fd is the instance's descriptor, for calls that do not read: the file
// keeps it open for the process's life.
func (in *instance) fd() int { return int(in.f.Fd()) }

// read reads events for the process's life and dispatches each. Should
// reading fail for good, every watch is told IN_IGNORED, and Add fails
// from then on.
func (in *instance) read() {
	buf := make([]byte, readSize)
	for {
		n, err := in.f.Read(buf)
		if err != nil {
			in.end(fmt.Errorf("read inotify events: %w", err))
			return
		}
		in.dispatchAll(buf[:n])
	}
}

// dispatchAll dispatches the events in b, which holds whole events.
func (in *instance) dispatchAll(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		size := unix.SizeofInotifyEvent + int(raw.Len)
		if size > len(b) {
			return // the kernel writes whole events: cannot happen
		}
		name := b[unix.SizeofInotifyEvent:size]
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1] // padding
		}
		in.dispatch(raw.Wd, Event{Mask: raw.Mask, Name: string(name)})
		b = b[size:]
	}
}

// dispatch hands ev, an event of watch descriptor wd, to the watches it
// concerns.
func (in *instance) dispatch(wd int32, ev Event) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
		for _, o := range in.objects {
			for w := range o.watches {
				w.fn(Event{Mask: unix.IN_Q_OVERFLOW})
			}
		}
		return
	}
	o := in.objects[wd]
	if o == nil {
		return // removed; or its IN_IGNORED after Remove
	}
	if ev.Mask&unix.IN_IGNORED != 0 {
		o.gone = true
		delete(in.objects, wd)
		for w := range o.watches {
			w.fn(Event{Mask: unix.IN_IGNORED})
		}
		return
	}
	for w := range o.watches {
		if ev.Mask&w.mask != 0 {
			w.fn(ev)
		}
	}
}

// end records that reading failed for good and tells every watch that it
// ended.
func (in *instance) end(err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.broken = errors.Join(errors.New("inotify reader ended"), err)
	for wd, o := range in.objects {
		o.gone = true
		delete(in.objects, wd)
		for w := range o.watches {
			w.fn(Event{Mask: unix.IN_IGNORED})
		}
	}
}
