// Package randname makes names nobody can guess: the name of a reply FIFO,
// a request id, the temporary file of the status file. Another user of the
// same directory must not be able to take such a name in advance.
//
// Guarantees: New returns 128 bits from crypto/rand in lower-case hex, 32
// characters that are all valid in a file name and a reply name. It never
// fails: crypto/rand reads getrandom(2), falls back to /dev/urandom on
// kernels without it (ENOSYS), and ends the program on any other refusal
// (go.dev/issue/66821), rather than hand out a guessable name.
//
// Cost, measured on linux/amd64 with Go 1.26: linking crypto/rand adds
// about 0.05 ms of package initialisation to every start of the agent
// (GODEBUG=inittrace=1, the crypto packages' median over ten starts) and
// 160 KB to the binary; each name is one getrandom(2).
package randname

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a new random name.
func New() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
