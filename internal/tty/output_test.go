//go:build linux

package tty

import (
	"os"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/testgate"
)

// TestOutput: a terminal gets a writer that blocks SIGTTOU around
// each write and writes what it is given; anything else is written as it is.
func TestOutput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := Output(w); got != w {
		t.Errorf("a pipe: got %T, want the file itself", got)
	}
	master, slave, err := OpenPTY(Winsize{Cols: 80, Rows: 24})
	if err != nil {
		testgate.Skip(t, "open a pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	out := Output(slave)
	if _, ok := out.(ttyWriter); !ok {
		t.Fatalf("a terminal: got %T, want a ttyWriter", out)
	}
	if n, err := out.Write([]byte("hi\n")); n != 3 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	// The terminal may hand the line on in more than one read.
	master.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	buf := make([]byte, 16)
	for len(got) < len("hi\r\n") {
		n, err := master.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the terminal shows %q, then %v; want \"hi\\r\\n\"", got, err)
		}
	}
	if string(got) != "hi\r\n" {
		t.Fatalf("the terminal shows %q; want \"hi\\r\\n\"", got)
	}
}
