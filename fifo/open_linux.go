package fifo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenReader opens the FIFO at path for reading. Like open(2) it waits until
// a writer opens the other end, but it gives up when ctx is done. The result
// is non-blocking underneath, so Read, Close and deadlines work from any
// goroutine; Read returns io.EOF once every writer has left. The path's
// directory is resolved as OpenDir does; the FIFO is opened as Dir's
// OpenReader does.
func OpenReader(ctx context.Context, path string) (*os.File, error) {
	return inParent(path, func(d *Dir, name string) (*os.File, error) { return d.OpenReader(ctx, name) })
}

// OpenWriter opens the FIFO at path for writing, waiting until a reader opens
// the other end or ctx is done.
func OpenWriter(ctx context.Context, path string) (*os.File, error) {
	return inParent(path, func(d *Dir, name string) (*os.File, error) { return d.OpenWriter(ctx, name) })
}

// OpenWriterNow opens the FIFO at path for writing without waiting. It
// returns ErrNoReader when no process has it open for reading.
func OpenWriterNow(path string) (*os.File, error) {
	return inParent(path, (*Dir).OpenWriterNow)
}

// OpenReaderNow opens the FIFO at path for reading without waiting for a
// writer. Until a writer has opened it, Read returns io.EOF.
func OpenReaderNow(path string) (*os.File, error) {
	return inParent(path, (*Dir).OpenReaderNow)
}

// inParent runs op on the directory of path, opened for the call, and the
// path's last component.
func inParent(path string, op func(d *Dir, name string) (*os.File, error)) (*os.File, error) {
	d, err := OpenDir(filepath.Dir(path), false)
	if err != nil {
		return nil, fmt.Errorf("open fifo %s: %w", path, err)
	}
	defer d.Close()
	return op(d, filepath.Base(path))
}

// OpenReader opens the FIFO name of d for reading, waiting for a writer or
// for ctx to be done (see the package function OpenReader).
func (d *Dir) OpenReader(ctx context.Context, name string) (*os.File, error) {
	return d.openWaiting(ctx, name, unix.O_RDONLY)
}

// OpenWriter opens the FIFO name of d for writing, waiting for a reader or
// for ctx to be done.
func (d *Dir) OpenWriter(ctx context.Context, name string) (*os.File, error) {
	return d.openWaiting(ctx, name, unix.O_WRONLY)
}

// OpenWriterNow opens the FIFO name of d for writing without waiting. It
// returns ErrNoReader when no process has it open for reading.
func (d *Dir) OpenWriterNow(name string) (*os.File, error) {
	f, err := d.open(name, unix.O_WRONLY|unix.O_NONBLOCK)
	if errors.Is(err, unix.ENXIO) {
		return nil, fmt.Errorf("open fifo %s: %w", d.Join(name), ErrNoReader)
	}
	return f, err
}

// OpenReaderNow opens the FIFO name of d for reading without waiting for a
// writer. Until a writer has opened it, Read returns io.EOF.
func (d *Dir) OpenReaderNow(name string) (*os.File, error) {
	return d.open(name, unix.O_RDONLY|unix.O_NONBLOCK)
}

// openWaiting is a blocking open(2) run on its own goroutine. On
// cancellation it opens the same inode O_RDWR|O_NONBLOCK, which counts as
// both a reader and a writer and so completes the pending open; both
// descriptors are then closed.
func (d *Dir) openWaiting(ctx context.Context, name string, flag int) (*os.File, error) {
	h, err := d.pin(name)
	if err != nil {
		return nil, err
	}
	defer h.close()
	path := d.Join(name)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open fifo %s: %w", path, err)
	}

	type result struct {
		fd  int
		err error
	}
	done := make(chan result, 1)
	go func() {
		fd, err := h.reopen(flag)
		done <- result{fd, err}
	}()

	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("open fifo %s: %w", path, r.err)
		}
		return file(r.fd, path)
	case <-ctx.Done():
	}
	kick, kerr := h.reopen(unix.O_RDWR | unix.O_NONBLOCK)
	r := <-done
	if kerr == nil {
		unix.Close(kick)
	}
	if r.err == nil {
		unix.Close(r.fd)
	}
	return nil, fmt.Errorf("open fifo %s: %w", path, ctx.Err())
}

// open opens the FIFO name of d with flag, which must not block.
func (d *Dir) open(name string, flag int) (*os.File, error) {
	h, err := d.pin(name)
	if err != nil {
		return nil, err
	}
	defer h.close()
	fd, err := h.reopen(flag)
	if err != nil {
		return nil, fmt.Errorf("open fifo %s: %w", d.Join(name), err)
	}
	return file(fd, d.Join(name))
}

// file wraps fd, switching it to non-blocking so the runtime poller serves it.
func file(fd int, path string) (*os.File, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("open fifo %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

func fileType(mode uint32) os.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFLNK:
		return os.ModeSymlink
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	}
	return 0
}
