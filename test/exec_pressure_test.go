//go:build linux

package test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests of this file put the exec engine under pressure where a writer
// can block: a full output FIFO nobody reads, reply FIFOs whose reader
// stalls, bursts of bad input, huge ids. Each one is a finding of issue 8.

// binSh returns PROGRAM ARG... running script with the host's /bin/sh;
// $0 is the test binary.
func binSh(script string) []string { return []string{"/bin/sh", "-c", script, selfBin} }

// requireStopWithin sends SIGTERM and fails t unless the agent, whose
// -stop-timeout is stopTimeout, exits 0 within stopBound(stopTimeout).
func requireStopWithin(t *testing.T, a *agent, stopTimeout time.Duration) {
	t.Helper()
	begin := time.Now()
	a.signal(syscall.SIGTERM)
	code := a.wait(hangTimeout + stopBound(stopTimeout))
	if took := time.Since(begin); took > stopBound(stopTimeout) {
		t.Errorf("stop took %v; want at most -stop-timeout + 1 s (%v)", took.Round(time.Millisecond), stopTimeout+time.Second)
	}
	if code != 0 {
		t.Errorf("agent exited %d, want 0", code)
	}
}

// stalledReply makes DIR/replies/name and opens it for reading, never to
// read it; with fill, its pipe is filled first, so a write to it blocks.
func stalledReply(t *testing.T, dir, name string, fill bool) {
	t.Helper()
	path := filepath.Join(dir, "replies", name)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
	r := openReader(t, path)
	if !fill {
		return
	}
	// Written with raw write(2): an *os.File would wait for room.
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s for writing: %v", path, err)
	}
	defer unix.Close(fd)
	chunk := bytes.Repeat([]byte("#"), 4096)
	for {
		if _, err := unix.Write(fd, chunk); err != nil {
			if err != unix.EAGAIN {
				t.Fatalf("fill %s: %v", path, err)
			}
			break
		}
	}
	_ = r // held open, never read, until the test ends
}

// waitRejected waits until the status file counts n rejected requests.
func waitRejected(t *testing.T, a *agent, n int) {
	t.Helper()
	a.waitStatus(fmt.Sprintf("%d requests rejected", n), func(s status) bool { return s.Requests.Rejected >= n })
}

// TestExecStopWithQueuedErrorsAndNoReader (finding 1): error frames nobody
// reads fill the output FIFO; a stop is still honoured within -stop-timeout
// + 1 s.
func TestExecStopWithQueuedErrorsAndNoReader(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags:   []string{"-mode", "exec", "-stop-timeout", "1s"},
		program: binSh("cat"),
	})
	w := openWriter(t, a.in)
	// In batches the agent answers before the next, so that its frames fill
	// the output FIFO rather than outrun its writer.
	const total, batch = 15_000, 200
	for sent := 0; sent < total; sent += batch {
		var lines bytes.Buffer
		for i := sent; i < sent+batch; i++ {
			// Each is answered under its own id: about 300 bytes of frame.
			fmt.Fprintf(&lines, `{"id":"bad-%05d-%s", nope`+"\n", i, strings.Repeat("x", 200))
		}
		w.write(lines.Bytes())
		waitRejected(t, a, sent+batch)
	}
	requireStopWithin(t, a, time.Second)
	w.close()
}

// TestExecTimeoutWithBlockedReply (finding 2): a request whose reply FIFO is
// never read still ends at its time limit and frees its slot.
func TestExecTimeoutWithBlockedReply(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags: []string{"-mode", "exec", "-max-concurrent", "1", "-stop-timeout", "1s"},
		program: binSh(`read what; if [ "$what" = flood ]; then
			while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done
		fi; echo "$what"`),
	})
	waitServing(t, a)
	stalledReply(t, a.dir, "stall", false)
	w := openWriter(t, a.in)
	w.writeLine(`{"id":"flood","reply":"stall","timeout":"1s","stdin":"flood\n"}`)
	a.waitStatus("the flood request running", func(s status) bool { return s.Requests.Active == 1 })
	// Its child ends at its limit although its frames cannot be written,
	// and the one slot is free for an honest request.
	a.waitStatus("the flood request ended", func(s status) bool { return s.Requests.Active == 0 && s.Requests.Completed == 1 })
	res := runSend(t, a.dir, nil, "-timeout", "5s", "honest")
	res.requireCode(t, 0)
	if string(res.stdout) != "honest\n" {
		t.Fatalf("send got %q, want %q", res.stdout, "honest\n")
	}
	if kids := childrenOf(a.pid); len(kids) != 0 {
		t.Fatalf("children left after the time limit: %s", describe(kids))
	}
	requireStopWithin(t, a, time.Second)
	w.close()
}

// TestExecStalledRepliesDoNotStallOthers (finding 3): requests naming reply
// FIFOs whose reader never reads neither delay the request loop nor another
// request, nor a stop.
func TestExecStalledRepliesDoNotStallOthers(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const stopTimeout = 3 * time.Second
	a := startAgent(t, agentConfig{
		flags:   []string{"-mode", "exec", "-max-concurrent", "8", "-stop-timeout", stopTimeout.String()},
		program: binSh("cat"),
	})
	waitServing(t, a)
	w := openWriter(t, a.in)
	big := strings.Repeat("z", 200_000)
	for i := range 3 {
		name := fmt.Sprintf("stall%d", i)
		stalledReply(t, a.dir, name, true)
		// Accepted: its output cannot be written.
		w.writeLine(jsonLine(t, map[string]any{"id": "a" + name, "reply": name, "stdin": big}))
		// Rejected: its error frame cannot be written.
		w.writeLine(jsonLine(t, map[string]any{"id": "b" + name, "reply": name, "args": []string{"x"}}))
	}
	// The loop was not held: an honest request is served well before one
	// -stop-timeout has passed, let alone three.
	s := startSend(t, a.dir, nil, nil, "-timeout", stopTimeout.String(), "honest")
	res := s.wait(t, hangTimeout)
	res.requireCode(t, 0)
	if string(res.stdout) != "honest\n" {
		t.Fatalf("send got %q, want %q", res.stdout, "honest\n")
	}
	waitRejected(t, a, 3)
	requireStopWithin(t, a, stopTimeout)
	w.close()
}

// TestExecExitFramesAtStopUnderLoad (finding 4): 100 running requests whose
// trees ignore SIGTERM each get their exit frame at a stop, to a reader
// attached all along, and the stop ends in bounded time.
func TestExecExitFramesAtStopUnderLoad(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const n = 100
	a, w, r := startExec(t, agentConfig{
		flags:   []string{"-max-concurrent", strconv.Itoa(n), "-stop-timeout", "1s"},
		program: binSh(`trap "" TERM; echo ready; exec sleep 60`),
	})
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, `{"id":"t%d"}`+"\n", i)
	}
	w.write([]byte(lines.String()))
	// Each child ignores TERM before it says ready.
	all := map[string]*response{}
	for ready := 0; ready < n; {
		f := readFrame(t, r)
		addFrame(t, all, f)
		if f.Type == "stdout" {
			ready++
		}
	}
	begin := time.Now()
	a.signal(syscall.SIGTERM)
	for ended := 0; ended < n; {
		if addFrame(t, all, readFrame(t, r)).done() {
			ended++
		}
	}
	for id, resp := range all {
		if resp.exit == nil || resp.exit.Signal != "KILL" {
			t.Errorf("request %s: want an exit frame for a child killed with SIGKILL:%s", id, resp)
		}
	}
	code := a.wait(hangTimeout)
	if took := time.Since(begin); took > stopBound(time.Second) {
		t.Errorf("stop took %v; want at most -stop-timeout + 1 s", took.Round(time.Millisecond))
	}
	if code != 0 {
		t.Errorf("agent exited %d, want 0", code)
	}
}

// TestExecRejectionBurstWithReader (finding 7): 1,000 bad lines in one
// write, with the output FIFO read all along, give 1,000 error frames.
func TestExecRejectionBurstWithReader(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const n = 1000
	a, w, r := startExec(t, agentConfig{program: binSh("cat")})
	var burst bytes.Buffer
	for i := range n {
		fmt.Fprintf(&burst, `{"id":"e%d", broken`+"\n", i)
	}
	written := make(chan error, 1)
	go func() {
		w.f.SetWriteDeadline(time.Now().Add(hangTimeout))
		_, err := w.f.Write(burst.Bytes())
		written <- err
	}()
	all := responses(t, r, func() []string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("e%d", i)
		}
		return ids
	}()...)
	if err := <-written; err != nil {
		t.Fatalf("write the burst: %v", err)
	}
	for id, resp := range all {
		resp.requireError(t)
		if !strings.Contains(resp.err.Error, "bad JSON") {
			t.Errorf("request %s: %s", id, resp.err.line)
		}
	}
	if strings.Contains(a.stderr(), "dropped") {
		t.Errorf("error frames dropped although a reader was attached:\n%s", a.stderr())
	}
}

// vmRSS returns the resident set of pid in bytes.
func vmRSS(t *testing.T, pid int) int { return procStatusBytes(t, pid, "VmRSS") }

// procStatusBytes returns field of /proc/PID/status, a size in kB, in
// bytes.
func procStatusBytes(t *testing.T, pid int, field string) int {
	t.Helper()
	v, ok := procStatus(t, pid)[field]
	if !ok {
		t.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	kb, err := strconv.Atoi(strings.TrimSuffix(v, " kB"))
	if err != nil {
		t.Fatalf("parse %s %q: %v", field, v, err)
	}
	return kb << 10
}

// TestExecHugeIDsNoReader (finding 8): 260 requests with 1 MB ids and
// nobody reading the output FIFO neither grow the agent nor its log, and it
// keeps serving.
func TestExecHugeIDsNoReader(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags:   []string{"-mode", "exec", "-max-request", "2MiB"},
		program: binSh("cat"),
	})
	w := openWriter(t, a.in)
	id := strings.Repeat("i", 1<<20)
	for i := range 260 {
		w.writeLine(fmt.Sprintf(`{"id":"%s%d","stdin":"x"}`, id, i))
	}
	waitRejected(t, a, 260)
	rss := vmRSS(t, a.pid)
	t.Logf("agent RSS after 260 huge ids: %d KiB", rss>>10)
	// 260 MiB of ids kept would show far above either bound; a -race build
	// of the agent needs more for itself (the detector's shadow memory for
	// each of its reserved threads and Ps).
	limit := 32 << 20
	if raceBuild {
		limit = 64 << 20
	}
	if rss > limit {
		t.Errorf("agent RSS is %d MiB after 260 huge ids; want under %d MiB", rss>>20, limit>>20)
	}
	if n := len(a.stderr()); n > 256<<10 {
		t.Errorf("agent logged %d KiB for 260 rejected requests: ids or lines are logged whole", n>>10)
	}
	requireServed(t, a.dir, nil, "served\n", "served")
	w.close()
}

// TestExecCutLineAnsweredOnItsReply (finding 10): a JSON line cut inside a
// string still names its id and reply, and its error frame goes there.
func TestExecCutLineAnsweredOnItsReply(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a, w, out := startExec(t, agentConfig{program: binSh("cat")})
	path := filepath.Join(a.dir, "replies", "cut")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	reply := openReader(t, path)
	w.writeLine(`{"id":"x","reply":"cut","stdin":"abc`)
	f := readFrame(t, reply)
	if f.ID != "x" || f.Type != "error" || !strings.Contains(f.Error, "bad JSON") {
		t.Fatalf("want the error frame of request x on its reply FIFO, got %s", f.line)
	}
	w.writeLine("after")
	resp := nextResponse(t, out)
	resp.requireExit(t, 0, "after\n")
}

// TestExecBlankLinesSkipped: an empty line, or one of only blanks, is no
// request.
func TestExecBlankLinesSkipped(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a, w, r := startExec(t, agentConfig{program: binSh("cat")})
	w.write([]byte("\n \t\r\n\n"))
	w.writeLine("real")
	resp := nextResponse(t, r)
	resp.requireExit(t, 0, "real\n")
	st := a.waitStatus("one request completed", func(s status) bool { return s.Requests.Completed == 1 })
	if st.Requests.Accepted != 1 || st.Requests.Rejected != 0 {
		t.Fatalf("blank lines counted as requests: %+v", st.Requests)
	}
}
