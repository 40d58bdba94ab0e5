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
//
// Every member of that session descends from p, since a session is left
// only for a new one and joined only at birth: once p's tree is gone
// (treeGone: its group is empty and the agent has no child that could be
// an orphan of it, the usual end of a shell), nothing is left on the
// terminal, and Hangup returns without a scan of /proc, which costs as
// much as the processes running.
func (r *Reaper) Hangup(p *Process) int {
	if r.foreign {
		return 0 // pids in /proc are another namespace's
	}
	if r.treeGone(p) {
		return 0
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
