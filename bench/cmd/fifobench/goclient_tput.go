//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// The throughput pattern, as in bench/client.c: patternLen bytes, a prime
// count so that no shift by a power of two compares equal, repeated.
const (
	patternLen = 1048573
	tputChunk  = 256 << 10
)

func fillPattern() []byte {
	p := make([]byte, patternLen)
	x := uint32(2463534242)
	for i := range p {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		p[i] = byte(x)
	}
	return p
}

// checkChunk compares b, read at stream offset off, with the pattern.
func checkChunk(pat, b []byte, off uint64) error {
	for len(b) > 0 {
		at := int(off % patternLen)
		k := min(patternLen-at, len(b))
		if !bytes.Equal(b[:k], pat[at:at+k]) {
			return fmt.Errorf("stream differs near byte %d", off)
		}
		b, off = b[k:], off+uint64(k)
	}
	return nil
}

// tputWarm is what goTput sends and waits for before its clock starts, so
// that the contender's start is not in the figure.
const tputWarm = 64 << 10

// goTput writes mib MiB of the pattern into IN while reading them back from
// OUT, one thread with poll(2), and prints "BYTES NS".
func goTput(res *bufio.Writer, inPath, outPath string, mib int) error {
	in, out, err := openBoth(inPath, outPath)
	if err != nil {
		return err
	}
	defer unix.Close(out)
	defer unix.Close(in)
	if err := unix.SetNonblock(in, true); err != nil {
		return err
	}
	if err := unix.SetNonblock(out, true); err != nil {
		return err
	}
	s := &stream{in: in, out: out, pat: fillPattern(), buf: make([]byte, 1<<20)}
	if err := s.to(tputWarm); err != nil {
		return err
	}
	total := uint64(mib) << 20
	begin := time.Now()
	if err := s.to(tputWarm + total); err != nil {
		return err
	}
	fmt.Fprintln(res, total, time.Since(begin).Nanoseconds())
	return nil
}

// stream moves the pattern through IN and OUT.
type stream struct {
	in, out   int
	pat, buf  []byte
	sent, got uint64
}

// to streams until got reaches total, sending no more than total, and
// checks every byte.
func (s *stream) to(total uint64) error {
	for s.got < total {
		p := []unix.PollFd{{Fd: int32(s.in)}, {Fd: int32(s.out), Events: unix.POLLIN}}
		if s.sent < total {
			p[0].Events = unix.POLLOUT
		}
		n, err := unix.Poll(p, 10000)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("poll: %w", err)
		case n == 0:
			return errors.New("no progress in 10 s")
		}
		if p[0].Revents&(unix.POLLOUT|unix.POLLERR) != 0 {
			at := int(s.sent % patternLen)
			k := min(patternLen-at, tputChunk, int(total-s.sent))
			w, err := unix.Write(s.in, s.pat[at:at+k])
			if err != nil && err != unix.EAGAIN && err != unix.EINTR {
				return fmt.Errorf("write: %w", err)
			}
			s.sent += uint64(max(w, 0))
		}
		if p[1].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 {
			if err := s.read(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *stream) read() error {
	r, err := unix.Read(s.out, s.buf)
	switch {
	case r == 0 && err == nil:
		return errors.New("read: end of file")
	case err != nil && err != unix.EAGAIN && err != unix.EINTR:
		return fmt.Errorf("read: %w", err)
	case r > 0:
		if err := checkChunk(s.pat, s.buf[:r], s.got); err != nil {
			return err
		}
		s.got += uint64(r)
	}
	return nil
}
