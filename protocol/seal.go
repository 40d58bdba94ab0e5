package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Whole lines. A write of at most PipeBuf bytes to a pipe is atomic: no
// other writer's bytes land inside it. A longer one is not: while it
// waits for room, any other writer of the input FIFO (flock holds back
// only the writers that take it) can put bytes between two of its pieces,
// and so splice a line of its own into another's, or frame another's
// pieces as a line of its own. Linux cuts a write into pieces only where
// the pipe is full, and only between pages counted from the write's start
// (PipeBuf bytes, or a multiple), when its length is a multiple of
// PipeBuf. So a client's line longer than MaxUnsealed bytes proves that
// it is whole: it begins with its seal,
//
//	{"size":N,"sha256":"HEX",...
//
// where N is the line's length in bytes (without its newline) and HEX the
// SHA-256, in lower-case hex, of every byte after the seal's closing
// quote up to the newline. WireLine writes it so that:
//
//   - the seal, the id and the reply lie in the line's first piece, which
//     begins with a newline: whatever another writer did, a line that
//     begins with that piece is its writer's own;
//   - a piece put into the line, or the line cut short, changes its
//     length and its digest;
//   - every piece is PipeBuf bytes (the line is padded with spaces).
//
// The seal is framing, not part of what the line says: it is checked and
// taken off before the line's own keys are read (unseal), for every kind
// of line alike, so that a line means the same sealed or not, and a key
// of its own may be called "size" or "sha256" (a control line's terminal
// size is). A line claims a seal when it begins with {"size": and a
// digit; one whose own first key is "size", its value not a number (a
// control line's terminal size is a string), claims none.
//
// A line that carries a seal must match it. One that carries none is
// taken at any length, as the exec protocol has always taken a long line
// written under the FIFO's flock by hand: so a writer who can stall the
// agent's intake and fill the FIFO can still frame a later piece of
// another's long line as a line of its own and read that piece (never the
// first, which begins with a newline and holds the id and the reply
// name); what it cannot do is make a sealed line say anything else, or
// answer it (docs/security.md).

// PipeBuf is PIPE_BUF on Linux: a write of at most this many bytes to a
// pipe is atomic.
const PipeBuf = 4096

// MaxUnsealed is the longest line, without its newline, taken without a
// seal: with a newline before it and one after it, it fits one atomic
// write. (Not PipeBuf - 1: the last piece of a sealed line is its last
// PipeBuf - 1 bytes and its newline, which must not pass as a line.)
const MaxUnsealed = PipeBuf - 2

// ErrDamaged is a line that may hold bytes of another writer: one that
// does not match its seal, or one that gives a key twice. Its sender cannot be told apart from a
// writer who spliced it: the agent answers it on no reply FIFO.
var ErrDamaged = errors.New("damaged line")

const (
	sealSize   = `{"size":`
	sealDigest = `,"sha256":"`
	digestLen  = 2 * sha256.Size
	// maxSizeDigits bounds N's digits: 10 say more than any line.
	maxSizeDigits = 10
)

// unseal takes the seal off line (without its newline), as framing: a
// line that begins with a seal must match it, and is returned as the
// line without it, `{` and what follows the seal and its comma, so that
// none of the line's own keys is ever read together with the seal's. A
// line without a seal is returned as it is. The line without its seal is
// a copy of line of the same length, the seal's bytes blanked out, so that
// an offset in it is one in line. It returns an error wrapping ErrDamaged
// for a seal that does not match.
func unseal(line []byte) ([]byte, error) {
	if !hasSeal(line) {
		// Unsealed: taken as the contract has it, at any length up to
		// -max-request; its writer vouches for nothing (see the doc
		// above: what that leaves open).
		return line, nil
	}
	size, rest, ok := parseSeal(line)
	if !ok {
		return nil, fmt.Errorf(`%w: its seal is malformed: want {"size":N,"sha256":"HEX" first, HEX 64 lower-case hex digits`, ErrDamaged)
	}
	if size != len(line) {
		return nil, fmt.Errorf("%w: it has %d bytes, its seal says %d", ErrDamaged, len(line), size)
	}
	sum := sha256.Sum256(rest)
	if want := line[len(line)-len(rest)-digestLen-1 : len(line)-len(rest)-1]; !bytes.Equal(want, hexDigest(sum)) {
		return nil, fmt.Errorf("%w: its bytes do not match its seal's sha256", ErrDamaged)
	}
	end := len(line) - len(rest) // just past the seal, and past its comma if one follows
	if rest[0] == ',' {
		end++
	}
	obj := append([]byte(nil), line...)
	for i := 1; i < end; i++ {
		obj[i] = ' '
	}
	return obj, nil
}

// hasSeal reports whether line claims a seal: it begins with
// {"size": and a digit. A line whose own first key is "size" with a
// value of another kind (a control line's terminal size, a string) claims
// none.
func hasSeal(line []byte) bool {
	return len(line) > len(sealSize) && bytes.HasPrefix(line, []byte(sealSize)) &&
		'0' <= line[len(sealSize)] && line[len(sealSize)] <= '9'
}

// parseSeal reads the seal at the start of line: its size, and what
// follows it, which must go on with ',' or end the object.
func parseSeal(line []byte) (size int, rest []byte, ok bool) {
	b := line[len(sealSize):]
	n := 0
	for n < len(b) && n <= maxSizeDigits && '0' <= b[n] && b[n] <= '9' {
		n++
	}
	if n == 0 || n > maxSizeDigits || n > 1 && b[0] == '0' {
		return 0, nil, false
	}
	size, err := strconv.Atoi(string(b[:n]))
	if err != nil {
		return 0, nil, false
	}
	b = b[n:]
	if !bytes.HasPrefix(b, []byte(sealDigest)) || len(b) < len(sealDigest)+digestLen+2 {
		return 0, nil, false
	}
	b = b[len(sealDigest):]
	for _, c := range b[:digestLen] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, nil, false
		}
	}
	b = b[digestLen:]
	if b[0] != '"' || b[1] != ',' && b[1] != '}' {
		return 0, nil, false
	}
	return size, b[1:], true
}

// hexDigest is sum in lower-case hex.
func hexDigest(sum [sha256.Size]byte) []byte {
	return hex.AppendEncode(make([]byte, 0, digestLen), sum[:])
}

// WireLine returns the JSON object obj (one line, no newline) as a client
// writes it to an input FIFO: a newline first, so that a fragment an
// earlier writer left unterminated ends there (the reader skips the blank
// line that is left when there is none), then the line and its newline.
// When that is more than PipeBuf bytes, the line is sealed and padded with
// spaces to a multiple of PipeBuf bytes, to be written with one write(2)
// (or, after a partial write, one for the rest), which Linux cuts only
// between pieces of PipeBuf bytes.
func WireLine(obj []byte) []byte {
	if len(obj) <= MaxUnsealed {
		b := make([]byte, 0, len(obj)+2)
		return append(append(append(b, '\n'), obj...), '\n')
	}
	body := obj[1:] // from the first member on: `"id":...}`, or `}`
	sep := 0
	if body[0] != '}' {
		sep = 1 // the ',' between the seal and the first member
	}
	// The newline, the seal with a size of d digits, the body and the
	// final newline, padded to whole pieces; N must have d digits.
	fixed := 1 + len(sealSize) + len(sealDigest) + digestLen + 1 + sep + len(body) + 1
	var size, pad int
	for d := 1; ; d++ {
		total := fixed + d
		pad = (PipeBuf - total%PipeBuf) % PipeBuf
		size = total + pad - 2
		if len(strconv.Itoa(size)) == d {
			break
		}
	}
	rest := make([]byte, 0, sep+len(body)+pad)
	if sep == 1 {
		rest = append(rest, ',')
	}
	rest = append(rest, body...)
	rest = append(rest, bytes.Repeat([]byte{' '}, pad)...)
	b := make([]byte, 0, size+2)
	b = append(b, '\n')
	b = append(b, sealSize...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, sealDigest...)
	b = append(b, hexDigest(sha256.Sum256(rest))...)
	b = append(b, '"')
	b = append(b, rest...)
	return append(b, '\n')
}
