package readwait

import "errors"

// errOtherABI: the process runs an ABI whose system call numbers this
// agent does not know (a 32-bit child of a 64-bit agent off x86).
var errOtherABI = errors.New("an executable of another ABI than this agent's")

// abiCache remembers the ABI of the last processes seen, by pid and the
// link of their executable (an exec changes the link; a process's ABI
// changes only at exec).
type abiCache struct {
	e    [8]abiEntry
	next int
}

type abiEntry struct {
	pid int
	exe uint64 // FNV-1a of the executable's link
	abi *abi   // nil: another ABI, not known here
}

// abiOf is the ABI of process pid. A process whose executable this agent
// may not read is taken to run the agent's own: whether its waits can be
// seen is then up to /proc/PID/syscall's own permission.
func (p *Probe) abiOf(pid int) (*abi, error) {
	nid, na, _ := nativeABI()
	n, err := readlink(p.path.set(pid, 0, "exe", -1), p.scratch().text[:])
	switch {
	case isGone(err):
		return nil, err
	case err != nil:
		return na, nil
	}
	h := fnv1a(p.scratch().text[:n])
	c := &p.abis
	for _, e := range c.e {
		if e.pid == pid && e.exe == h {
			return e.abi, e.err()
		}
	}
	m, err := readFile(&p.path, p.scratch().text[:64], 0) // p.path is still /proc/PID/exe
	switch {
	case isGone(err):
		return nil, err
	case err != nil: // not remembered: the next probe reads it again
		return na, nil
	}
	e := abiEntry{pid: pid, exe: h, abi: na}
	if id, ok := parseELF(p.scratch().text[:m]); ok && id != nid {
		e.abi = otherABI(id)
	}
	c.e[c.next] = e
	c.next = (c.next + 1) % len(c.e)
	return e.abi, e.err()
}

func (e abiEntry) err() error {
	if e.abi == nil {
		return errOtherABI
	}
	return nil
}

// fnv1a is the 64-bit FNV-1a hash of b (hash/fnv would allocate).
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
