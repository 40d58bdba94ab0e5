package fifo

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/fifobridge/fifobridge/sharedir"
)

// CheckAt reports whether path is an existing FIFO. It does not follow a final
// symbolic link: a link to a FIFO is not a FIFO. The path's directory is
// resolved as sharedir.Enter does.
func Check(path string) error {
	d, err := sharedir.Enter(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("check fifo %s: %w", path, err)
	}
	defer d.Close()
	return CheckAt(d, filepath.Base(path))
}

func describe(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "regular file"
	case fs.ModeDir:
		return "directory"
	case fs.ModeSymlink:
		return "symbolic link"
	case fs.ModeSocket:
		return "socket"
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return "device"
	}
	return m.Type().String()
}
