//go:build linux

package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/fifobridge/fifobridge/child"
)

// caught are the signals the agent registers, so that none of them, sent
// with kill(2), takes its default action on the agent: 1 to 31 but KILL and
// STOP (which cannot be caught), CHLD (the reaper's), URG and PROF (the
// runtime's), and the realtime signals the runtime lets a program have (35
// to 64; 32 to 34 are its own and libc's, see package sigreserved). A
// synchronous signal (SEGV, BUS, FPE, ILL, TRAP, SYS, STKFLT) raised by a
// fault of the agent itself still crashes it: the runtime tells the two
// apart by si_code.
func caught() []os.Signal {
	var sigs []os.Signal
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		switch {
		case sig == syscall.SIGKILL, sig == syscall.SIGSTOP, sig == syscall.SIGCHLD,
			sig == syscall.SIGURG, sig == syscall.SIGPROF, sig >= 32 && sig <= 34:
			continue
		}
		sigs = append(sigs, sig)
	}
	return sigs
}

// relay acts on the signals the agent caught until done is closed: TERM and
// INT call stop, PIPE is dropped (a log reader that went away), and every
// other one is passed to forward, for the children's process groups.
func relay(sigs <-chan os.Signal, forward chan<- os.Signal, stop context.CancelFunc, log *slog.Logger, done <-chan struct{}) {
	for {
		var sig os.Signal
		select {
		case <-done:
			return
		case sig = <-sigs:
		}
		switch sig {
		case syscall.SIGTERM, syscall.SIGINT:
			log.Info("stop requested", "signal", child.SignalName(sig.(syscall.Signal)))
			stop()
		case syscall.SIGPIPE:
		default:
			select {
			case forward <- sig:
			default:
				log.Warn("signal dropped: too many pending", "signal", child.SignalName(sig.(syscall.Signal)))
			}
		}
	}
}

// catchSignals registers every caught signal on a new channel. Call it
// after procinit.Start, which reads the inherited signal state that
// registering changes, and which catches the realtime signals 32 and 34,
// which os/signal cannot register.
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, caught()...)
	return sigs
}
