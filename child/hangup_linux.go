package child

import (
	"syscall"

	"github.com/fifobridge/fifobridge/internal/procfs"
)

// Hangup sends SIGHUP once to every process left in the session p led on
// its terminal (Spec.Ctty), p excepted, after p has exited: what a
// terminal's hangup would reach. It returns how many it signalled. Only
// processes that started after p are counted as its session's, and nothing
// is signalled once p's number names a new process: a session's id is not
// reused while the session has a member.
func (r *Reaper) Hangup(p *Process) int {
	if r.foreign {
		return 0 // pids in /proc are another namespace's
	}
	all := procfs.Processes()
	var left []proc
	for _, q := range all {
		if q.PID == p.Pid {
			return 0 // p's own number: p still runs, or it was reused
		}
		if q.SID == p.Pid && q.Start >= p.startTicks {
			left = append(left, q)
		}
	}
	for _, q := range left {
		signalProc(q, syscall.SIGHUP)
	}
	return len(left)
}
