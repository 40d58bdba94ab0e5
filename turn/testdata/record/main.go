// Command record runs real interactive programs, types a fixed script of
// inputs into them and writes what they print, chunk by chunk with its
// time, to the recordings the turn package's tests replay. It is run by
// hand (go run ./turn/testdata/record [NAME...]) from the module root; the
// recordings are committed, so the tests need none of these programs.
//
// A recording is a text file: '#' lines are comments, every other line is
// "MICROSECONDS EVENT QUOTED", where QUOTED is a Go string literal
// (strconv.Quote) and EVENT is one of
//
//	out  bytes the child printed, as one read returned them
//	in   bytes written to the child as one turn's input
//	type bytes written to the child outside any turn
//	int  the turn was interrupted: on a terminal QUOTED is the "\x03"
//	     written, on pipes SIGINT went to the child's process group
//	eof  the child's output ended
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/internal/tty"
)

// step is one thing the script does once the child has been quiet for
// settle: it types a turn's input, types outside a turn, or interrupts.
type step struct {
	in     string        // a turn's input
	typed  string        // input outside a turn
	intr   time.Duration // interrupt this long after in was written
	settle time.Duration // wait for this much quiet before the step; 0: 400 ms
}

type scenario struct {
	name  string
	argv  []string
	env   []string
	tty   bool
	note  string
	steps []step
}

func main() {
	out := flag.String("dir", "turn/testdata", "where recordings go")
	flag.Parse()
	want := map[string]bool{}
	for _, a := range flag.Args() {
		want[a] = true
	}
	for _, sc := range scenarios() {
		if len(want) > 0 && !want[sc.name] {
			continue
		}
		if err := record(sc, filepath.Join(*out, sc.name+".rec")); err != nil {
			fmt.Fprintln(os.Stderr, "record", sc.name+":", err)
			os.Exit(1)
		}
	}
}

// event is one line of a recording.
type event struct {
	at   time.Duration
	kind string
	data []byte
}

// recorder keeps what the child printed and when it last did.
type recorder struct {
	mu     sync.Mutex
	start  time.Time
	events []event
	last   time.Time
	done   chan struct{}
}

func (r *recorder) add(kind string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.events = append(r.events, event{at: now.Sub(r.start), kind: kind, data: append([]byte(nil), data...)})
	if kind == "out" {
		r.last = now
	}
}

// settle waits until nothing was printed for d since the call, or the
// output ended.
func (r *recorder) settle(d time.Duration) {
	from := time.Now()
	for {
		r.mu.Lock()
		last := r.last
		if last.Before(from) {
			last = from
		}
		wait := d - time.Since(last)
		r.mu.Unlock()
		if wait <= 0 {
			return
		}
		select {
		case <-r.done:
			return
		case <-time.After(wait):
		}
	}
}

func (r *recorder) read(f io.Reader) {
	defer close(r.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			r.add("out", buf[:n])
		}
		if err != nil {
			r.add("eof", nil)
			return
		}
	}
}

func record(sc scenario, path string) error {
	cmd := exec.Command(sc.argv[0], sc.argv[1:]...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"}, sc.env...)
	cmd.Dir = "/tmp"
	var in io.Writer
	var out io.Reader
	var closers []io.Closer
	if sc.tty {
		master, slave, err := tty.OpenPTY(tty.Winsize{Cols: 80, Rows: 24})
		if err != nil {
			return err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		defer slave.Close()
		in, out = master, master
		closers = append(closers, master)
	} else {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		cmd.Stdout, cmd.Stderr = w, w
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		defer w.Close()
		in, out = stdin, r
		closers = append(closers, r)
	}
	rec := &recorder{done: make(chan struct{})}
	rec.start = time.Now()
	rec.last = rec.start
	if err := cmd.Start(); err != nil {
		return err
	}
	if sc.tty {
		cmd.Stdin.(*os.File).Close()
	} else {
		cmd.Stdout.(*os.File).Close()
	}
	go rec.read(out)
	for _, s := range sc.steps {
		settle := s.settle
		if settle == 0 {
			settle = 400 * time.Millisecond
		}
		rec.settle(settle)
		if err := play(rec, sc, s, cmd, in); err != nil {
			fmt.Fprintln(os.Stderr, "record", sc.name+": the script stops:", err)
			break
		}
	}
	rec.settle(400 * time.Millisecond)
	if c, ok := in.(io.Closer); ok && !sc.tty {
		c.Close()
	}
	cmd.Process.Signal(syscall.SIGHUP)
	select {
	case <-rec.done:
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
	}
	cmd.Wait()
	for _, c := range closers {
		c.Close()
	}
	<-rec.done
	return write(path, sc, rec.events)
}

func play(rec *recorder, sc scenario, s step, cmd *exec.Cmd, in io.Writer) error {
	data, kind := s.in, "in"
	if s.typed != "" {
		data, kind = s.typed, "type"
	}
	rec.add(kind, []byte(data))
	if _, err := in.Write([]byte(data)); err != nil {
		return fmt.Errorf("write %q: %w", data, err)
	}
	if s.intr == 0 {
		return nil
	}
	time.Sleep(s.intr) // a recording, not a test: the child gets time to start its work
	if sc.tty {
		rec.add("int", []byte("\x03"))
		_, err := in.Write([]byte("\x03"))
		return err
	}
	rec.add("int", nil)
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}

func write(path string, sc scenario, events []event) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# %s\n# argv %q, env %q, terminal %v (80x24)\n", sc.note, sc.argv, sc.env, sc.tty)
	fmt.Fprintf(w, "# recorded by turn/testdata/record; columns: microseconds, event, Go-quoted bytes\n")
	for _, e := range events {
		fmt.Fprintf(w, "%d %s %s\n", e.at.Microseconds(), e.kind, strconv.Quote(string(e.data)))
	}
	return errors.Join(w.Flush(), f.Close())
}
