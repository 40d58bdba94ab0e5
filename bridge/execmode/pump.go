//go:build linux

package execmode

import (
	"os"
	"sync"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// smallStdin is the most stdin written inline, without a goroutine: an
// empty pipe always takes PIPE_BUF bytes at once, even one the kernel gave
// a single page because the user has too many pipe pages (its default 64
// KiB is not guaranteed).
const smallStdin = 4096

// feed writes the request's stdin to the child and closes it, unless
// start did, which it does with small ones.
func (r *request) feed() {
	if len(r.req.Stdin) <= smallStdin {
		return
	}
	r.io.Add(1)
	go func() {
		defer r.io.Done()
		r.stdin.Write(r.req.Stdin) // fails when the child exits unread, or at finish
		r.stdin.Close()
	}()
}

// pumpStdout writes the start frame, then the child's stdout as frames
// until finish wakes it, and then, once the stderr pump is done and the
// child reaped, the exit frame: the frames of one id come in order, and
// the exit frame needs no goroutine of its own.
func (r *request) pumpStdout() {
	r.frames.write(protocol.AppendStart(nil, r.req.ID, r.p.Pid))
	close(r.startWritten)
	pump(r.frames, r.req.ID, protocol.FrameStdout, r.stdout)
	<-r.stderrDone
	<-r.ended
	x := r.x
	st := x.status
	r.frames.write(protocol.AppendExit(nil, r.req.ID, protocol.Exit{Code: st.Code(),
		Signal: child.SignalName(st.Signal()), TimedOut: x.timedOut, Canceled: x.canceled,
		Killed: x.killed, DurationMS: x.duration.Milliseconds()}))
}

// pumpStderr writes the child's stderr as frames, after the start frame,
// until finish wakes it.
func (r *request) pumpStderr() {
	defer close(r.stderrDone)
	<-r.startWritten
	pump(r.frames, r.req.ID, protocol.FrameStderr, r.stderr)
}

// pumpBuffers keeps pump's buffers from one request to the next: two of
// 64 KiB per request, which would otherwise be zeroed for every one and
// make the collector run every few dozen requests. Frames copy what they
// send, so nothing of a buffer outlives its pump.
var pumpBuffers = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// pump turns what the child writes to f into frames of type typ until f ends
// or its deadline passes; then it takes what is still buffered and returns.
// A UTF-8 character cut between two reads is sent whole.
func pump(w *frames, id, typ string, f *os.File) {
	b := pumpBuffers.Get().(*[64 << 10]byte)
	defer pumpBuffers.Put(b)
	buf := b[:]
	held := 0 // bytes of a cut character kept at the start of buf
	send := func(data []byte, final bool) {
		whole, rest := data, []byte(nil)
		if !final {
			whole, rest = protocol.CutIncompleteRune(data)
		}
		if len(whole) > 0 {
			w.write(protocol.AppendData(nil, id, typ, whole))
		}
		held = copy(buf, rest)
	}
	for {
		n, err := f.Read(buf[held:])
		if n > 0 {
			send(buf[:held+n], false)
		}
		if err != nil {
			break
		}
	}
	left := fifo.Drain(f)
	send(append(buf[:held:held], left...), true)
}
