package sharedir

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// namesBatch is how many entries EachName reads at a time.
const namesBatch = 256

// EachName calls fn with the name of every entry of d, reading them through
// a new descriptor of d (openat of "."), never by path, a batch at a time:
// a directory that others filled with entries is never held in memory at
// once. It needs permission to list d.
func (d *Dir) EachName(fn func(name string)) error {
	fd := -1
	err := d.Use(func(dirfd int) (err error) {
		fd, err = unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", d.path, err)
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	for {
		names, err := f.Readdirnames(namesBatch)
		for _, name := range names {
			fn(name)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", d.path, err)
		}
	}
}
