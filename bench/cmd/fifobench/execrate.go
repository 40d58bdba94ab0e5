//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// senderCounts are the numbers of concurrent senders of execrate.
var senderCounts = []int{1, 4, 16}

// rateMetric names the requests per second with k senders.
func rateMetric(k int) string { return fmt.Sprintf("exec requests per second, %d senders", k) }

// execRate measures, for each sender count, the requests of `true` per
// second that each exec contender completes: fifobridge's exec mode (at
// most 16 children at once) and bench/execloop, a Go program that runs
// exec.Command per line read from a FIFO. The senders are goroutines of
// the harness, each with a reply FIFO of its own, one request in flight
// each: write the request, read until its end.
func execRate(b *bench, round int, r *results) error {
	for _, k := range senderCounts {
		for _, name := range rotate(b.have([]string{bridgeExec, bridgeExecBefore, execLoop}, r), round) {
			rate, err := b.rateOnce(name, k)
			if err != nil {
				return fmt.Errorf("%s, %d senders: %w", name, k, err)
			}
			r.add(rateMetric(k), name, rate)
		}
	}
	return nil
}

// rateOnce starts contender name and returns the requests per second that
// k senders got through it, over b.requests requests after a warm-up.
func (b *bench) rateOnce(name string, k int) (float64, error) {
	rn, err := b.start(name, unpinned)
	if err != nil {
		return 0, err
	}
	rate, err := b.rate(rn, k)
	if serr := rn.stop(); err == nil {
		err = serr
	}
	return rate, err
}

func (b *bench) rate(rn *running, k int) (float64, error) {
	in, err := os.OpenFile(rn.in, os.O_WRONLY, 0) // the harness reads it too: no wait
	if err != nil {
		return 0, err
	}
	defer in.Close()
	dir := filepath.Join(filepath.Dir(rn.in), "replies")
	if rn.name != execLoop {
		// The agent makes replies/ before it serves: one request answered on
		// the output FIFO says it does.
		if err := awaitServing(in, rn.out); err != nil {
			return 0, err
		}
	} else if err := os.Mkdir(dir, 0o700); err != nil {
		return 0, err
	}
	senders := make([]*sender, k)
	for i := range senders {
		if senders[i], err = newSender(rn.name, in, dir, i); err != nil {
			closeSenders(senders)
			return 0, err
		}
	}
	defer closeSenders(senders)
	if err := runSenders(senders, k); err != nil { // warm-up
		return 0, err
	}
	begin := time.Now()
	if err := runSenders(senders, b.requests); err != nil {
		return 0, err
	}
	return float64(b.requests) / time.Since(begin).Seconds(), nil
}

// runSenders has the senders make n requests in all, each taking the next
// until none is left, and returns the first error.
func runSenders(senders []*sender, n int) error {
	var next atomic.Int64
	errs := make(chan error, len(senders))
	var wg sync.WaitGroup
	for _, s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := s.request(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// awaitServing sends one request to the agent without a reply FIFO and
// reads the output FIFO up to its exit frame.
func awaitServing(in *os.File, outPath string) error {
	out, err := os.OpenFile(outPath, os.O_RDONLY, 0) // held read-write by the harness: no wait
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := in.WriteString(`{"id":"warm"}` + "\n"); err != nil {
		return err
	}
	out.SetReadDeadline(time.Now().Add(time.Minute))
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if strings.Contains(lines.Text(), `"type":"exit"`) {
			return nil
		}
	}
	return fmt.Errorf("no exit frame on the output FIFO: %v", lines.Err())
}

// sender is one sender of execrate: its reply FIFO, held open read-write
// so that the contender's open for writing never waits.
type sender struct {
	name   string // the contender
	id     int
	in     *os.File
	path   string
	reply  *os.File
	frames *bufio.Reader
}

func newSender(name string, in *os.File, dir string, id int) (*sender, error) {
	s := &sender{name: name, id: id, in: in, path: filepath.Join(dir, fmt.Sprintf("bench-%d", id))}
	if err := unix.Mkfifo(s.path, 0o600); err != nil {
		return nil, fmt.Errorf("mkfifo %s: %w", s.path, err)
	}
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		os.Remove(s.path)
		return nil, err
	}
	s.reply, s.frames = f, bufio.NewReader(f)
	return s, nil
}

// request sends request i and reads up to its end: the exit frame, or
// execloop's exit line.
func (s *sender) request(i int64) error {
	line, end := fmt.Sprintf(`{"id":"%d-%d","reply":"%s"}`+"\n", s.id, i, filepath.Base(s.path)), `"type":"exit"`
	if s.name == execLoop {
		line, end = s.path+"\n", "exit 0"
	}
	if _, err := s.in.WriteString(line); err != nil {
		return err
	}
	s.reply.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		got, err := s.frames.ReadString('\n')
		if err != nil {
			return fmt.Errorf("sender %d, request %d: %w", s.id, i, err)
		}
		if strings.Contains(got, `"type":"error"`) {
			return fmt.Errorf("sender %d, request %d: %s", s.id, i, strings.TrimSpace(got))
		}
		if strings.Contains(got, end) {
			return nil
		}
	}
}

func closeSenders(senders []*sender) {
	for _, s := range senders {
		if s != nil {
			s.reply.Close()
			os.Remove(s.path)
		}
	}
}
