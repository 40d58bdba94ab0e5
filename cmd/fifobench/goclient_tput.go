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

// goTput writes mib MiB of the pattern into IN while reading them back from
// OUT, one thread with poll(2), and prints "BYTES NS".
func goTput(res *bufio.Writer, inPath, outPath string, mib int) error {
	out, err := openFIFO(outPath, unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer unix.Close(out)
	in, err := openFIFO(inPath, unix.O_WRONLY)
	if err != nil {
		return err
	}
	defer unix.Close(in)
	if err := unix.SetNonblock(in, true); err != nil {
		return err
	}
	if err := unix.SetNonblock(out, true); err != nil {
		return err
	}
	pat, buf := fillPattern(), make([]byte, 1<<20)
	total := uint64(mib) << 20
	var sent, got uint64
	begin := time.Now()
	for got < total {
		p := []unix.PollFd{{Fd: int32(in)}, {Fd: int32(out), Events: unix.POLLIN}}
		if sent < total {
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
			at := int(sent % patternLen)
			k := min(patternLen-at, tputChunk, int(total-sent))
			w, err := unix.Write(in, pat[at:at+k])
			if err != nil && err != unix.EAGAIN && err != unix.EINTR {
				return fmt.Errorf("write: %w", err)
			}
			sent += uint64(max(w, 0))
		}
		if p[1].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 {
			r, err := unix.Read(out, buf)
			switch {
			case r == 0 && err == nil:
				return errors.New("read: end of file")
			case err != nil && err != unix.EAGAIN && err != unix.EINTR:
				return fmt.Errorf("read: %w", err)
			case r > 0:
				if err := checkChunk(pat, buf[:r], got); err != nil {
					return err
				}
				got += uint64(r)
			}
		}
	}
	fmt.Fprintln(res, total, time.Since(begin).Nanoseconds())
	return nil
}
