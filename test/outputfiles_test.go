//go:build linux

package test

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// outputFiles are a command's stdin, stdout and stderr as files in memory
// (memfd_create), which the command reads and writes itself. With pipes,
// os/exec copies the output in goroutines, and with WaitDelay set it
// closes a pipe whose copy has not finished that long after the command
// exited: on a loaded machine a command's whole output could be lost while
// its exit code said it succeeded. A file keeps what was written until it
// is read.
type outputFiles struct {
	stdin          *os.File // nil: no stdin
	stdout, stderr *os.File
}

// newOutputFiles makes the files; stdin holds in, unless in is nil.
func newOutputFiles(in []byte) (*outputFiles, error) {
	o := &outputFiles{}
	var err error
	if o.stdout, err = memFile("stdout"); err != nil {
		return nil, err
	}
	if o.stderr, err = memFile("stderr"); err != nil {
		o.close()
		return nil, err
	}
	if in != nil {
		if o.stdin, err = memFile("stdin"); err == nil {
			_, err = o.stdin.Write(in)
		}
		if err == nil {
			_, err = o.stdin.Seek(0, io.SeekStart)
		}
		if err != nil {
			o.close()
			return nil, fmt.Errorf("stdin file: %w", err)
		}
	}
	return o, nil
}

func memFile(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// read returns what the command wrote, once it exited, and closes the
// files. A failure to read is told in stderr.
func (o *outputFiles) read() (stdout []byte, stderr string) {
	defer o.close()
	stdout, err1 := readFrom(o.stdout)
	e, err2 := readFrom(o.stderr)
	if err := errors.Join(err1, err2); err != nil {
		e = append(e, "\n(read output: "+err.Error()+")"...)
	}
	return stdout, string(e)
}

func readFrom(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func (o *outputFiles) close() {
	for _, f := range []*os.File{o.stdin, o.stdout, o.stderr} {
		if f != nil {
			f.Close()
		}
	}
}
