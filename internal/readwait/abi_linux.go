package readwait

import (
	"encoding/binary"
	"errors"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file is how a syscall number is read: /proc/PID/syscall gives the
// number in the ABI of the process, which need not be the agent's (a
// 32-bit agent on a 64-bit kernel with 64-bit children, as .ci/crossbuild
// runs these tests, or the other way round). The ABI is told by the ELF
// header of /proc/PID/exe.

// call is what a system call waits on, as far as a probe cares.
type call uint8

const (
	callOther  call = iota
	callRead        // read, readv, pread64, preadv, preadv2, splice: argument 0 is the descriptor
	callSelect      // select, pselect6: argument 0 is nfds, 1 the read set
	callPoll        // poll, ppoll: argument 0 is the array, 1 its length
	callEpoll       // epoll_wait, epoll_pwait, epoll_pwait2: argument 0 is the epoll descriptor
)

// sysCall is one syscall number of an ABI and what it waits on.
type sysCall struct {
	nr   int
	what call
}

// abi is a system call ABI: its numbers, and the layout of an fd_set (an
// array of C longs) and of a pollfd.
type abi struct {
	name      string
	long      int  // bytes of a C long, the word of an fd_set
	bigEndian bool // of the words
	calls     []sysCall
}

func (a *abi) kind(nr int) call {
	for _, c := range a.calls {
		if c.nr == nr {
			return c.what
		}
	}
	return callOther
}

func (a *abi) order() binary.ByteOrder {
	if a.bigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// commonCalls are the calls every Linux architecture has, with the
// agent's numbers; legacyCalls (one file per group of architectures) adds
// the older ones the architecture has.
var commonCalls = []sysCall{
	{unix.SYS_READ, callRead}, {unix.SYS_READV, callRead}, {unix.SYS_PREAD64, callRead},
	{unix.SYS_PREADV, callRead}, {unix.SYS_PREADV2, callRead}, {unix.SYS_SPLICE, callRead},
	{unix.SYS_PSELECT6, callSelect}, {unix.SYS_PPOLL, callPoll},
	{unix.SYS_EPOLL_PWAIT, callEpoll}, {unix.SYS_EPOLL_PWAIT2, callEpoll},
}

// longSize is the agent's C long, in bytes.
const longSize = int(unsafe.Sizeof(uintptr(0)))

// elfID is what tells an ABI apart in an ELF header: the class (32 or 64
// bits), the byte order and the machine.
type elfID struct {
	class, data byte
	machine     uint16
}

// parseELF reads an ELF header's identity; ok is false when h is not one.
func parseELF(h []byte) (id elfID, ok bool) {
	if len(h) < 20 || string(h[:4]) != "\x7fELF" {
		return elfID{}, false
	}
	id.class, id.data = h[4], h[5]
	if id.data == 2 {
		id.machine = binary.BigEndian.Uint16(h[18:])
	} else {
		id.machine = binary.LittleEndian.Uint16(h[18:])
	}
	return id, true
}

// native is the agent's own ABI, and the ELF identity of its executable.
var native = struct {
	once sync.Once
	id   elfID
	err  error
	abi  abi
}{}

// nativeABI reads the agent's own ELF identity once.
func nativeABI() (elfID, *abi, error) {
	native.once.Do(func() {
		var path procPath
		var h [64]byte
		n, err := readFile(path.self("exe"), h[:], 0)
		id, ok := parseELF(h[:n])
		switch {
		case err != nil:
			native.err = err
		case !ok:
			native.err = errors.New("not an ELF file")
		}
		native.id = id
		native.abi = abi{name: "native", long: longSize, bigEndian: id.data == 2,
			calls: append(commonCalls[:len(commonCalls):len(commonCalls)], legacyCalls...)}
	})
	return native.id, &native.abi, native.err
}
