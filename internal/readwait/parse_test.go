//go:build linux

package readwait

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseSyscall: the lines /proc/PID/syscall shows, as Linux writes
// them (seen on 6.18: python3 in read and pselect6).
func TestParseSyscall(t *testing.T) {
	nr, args, ok := parseSyscall([]byte("0 0x0 0x7fb256df1b03 0x1 0x7fb256c270e0 0x1 0x0 0x7ffea2d81478 0x7fb256d162ad\n"))
	require.True(t, ok)
	require.Equal(t, 0, nr)
	require.Equal(t, [6]uint64{0, 0x7fb256df1b03, 1, 0x7fb256c270e0, 1, 0}, args)
	nr, args, ok = parseSyscall([]byte("270 0x1 0x7ffe8fb20110 0x0 0x0 0x0 0x0 0x7ffe8fb20080 0x7fb217d1c954\n"))
	require.True(t, ok)
	require.Equal(t, 270, nr)
	require.Equal(t, uint64(0x7ffe8fb20110), args[1])
	for _, line := range []string{"running\n", "-1 0x7ffe8fb20080 0x7fb217d1c954\n", "", "0 0x1\n", "0 0x1 0x2 0x3 0x4 0x5 zz 0x0 0x0\n", "99999999999 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n"} {
		_, _, ok := parseSyscall([]byte(line))
		require.False(t, ok, "%q", line)
	}
}

func FuzzParseSyscall(f *testing.F) {
	f.Add([]byte("0 0x0 0x7fb256df1b03 0x1 0x7fb256c270e0 0x1 0x0 0x7ffea2d81478 0x7fb256d162ad\n"))
	f.Add([]byte("running\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		nr, _, ok := parseSyscall(b)
		if ok && nr < 0 {
			t.Fatalf("%q: negative number %d", b, nr)
		}
	})
}

// TestFdIsSet: an fd_set is an array of C longs in the ABI's byte order;
// on a big-endian 64-bit ABI descriptor 0 is the last byte's low bit.
func TestFdIsSet(t *testing.T) {
	for _, a := range []abi{{long: 4}, {long: 8}, {long: 4, bigEndian: true}, {long: 8, bigEndian: true}} {
		for _, fd := range []uint64{0, 1, 7, 8, 31, 32, 63, 64, 100} {
			set := make([]byte, 16)
			words := len(set) / a.long
			w := fd / uint64(a.long*8)
			if int(w) >= words {
				continue
			}
			v := uint64(1) << (fd % uint64(a.long*8))
			word := set[int(w)*a.long:][:a.long]
			switch {
			case a.long == 4:
				a.order().PutUint32(word, uint32(v))
			default:
				a.order().PutUint64(word, v)
			}
			for other := uint64(0); other < uint64(words*a.long*8); other++ {
				require.Equal(t, other == fd, fdIsSet(set, other, &a), "long %d big-endian %v: fd %d set, %d asked", a.long, a.bigEndian, fd, other)
			}
		}
	}
	require.False(t, fdIsSet(nil, 0, &abi{long: 8}), "a set too short")
}

// TestParseELF: an ELF header tells class, byte order and machine.
func TestParseELF(t *testing.T) {
	h := []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00")
	id, ok := parseELF(h)
	require.True(t, ok)
	require.Equal(t, elfID{class: 2, data: 1, machine: 62}, id)
	h[5], h[18], h[19] = 2, 0, 22 // big-endian s390
	id, ok = parseELF(h)
	require.True(t, ok)
	require.Equal(t, elfID{class: 2, data: 2, machine: 22}, id)
	_, ok = parseELF([]byte("#!/bin/sh\nexec python3 -i\n"))
	require.False(t, ok)
}
