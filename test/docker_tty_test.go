//go:build linux

package test

import (
	"strconv"
	"strings"
	"testing"
)

// ttyAsk is a host shell function for the scripts below: ask CMD runs CMD
// in the shell on the container's terminal and prints its output, less the
// terminal's echo and "\r"; $fb is the FIFO directory and fd 4 its output.
const ttyAsk = `
ask() {
	printf '%s; echo "--""done"\n' "$1" >"$fb/in"
	while IFS= read -r line <&4; do
		line=$(printf '%s' "$line" | tr -d '\r')
		case $line in
		--done) return ;;
		*'--""done'*) ;;
		*) echo "$line" ;;
		esac
	done
}
`

// TestDockerTTY runs an interactive shell on the agent's terminal in a
// container (FIFOBRIDGE_TTY=true), driven from the host through the
// bind-mounted FIFO directory: its terminal, a resize through
// DIR/winsize, a restart on a fresh terminal that leaves nothing of the old
// one, and docker stop.
func TestDockerTTY(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	requireBusybox(t)
	checkLeaks(t, false)
	d := buildImages(t)
	c := d.start(t, containerOpts{busybox: true, bind: true,
		env:     []string{"FIFOBRIDGE_TTY=true", "FIFOBRIDGE_TTY_SIZE=90x20", "FIFOBRIDGE_STOP_SIGNAL=HUP"},
		program: []string{"sh"}})
	c.waitRunning()

	// The first ask also takes what the shell printed before it (its
	// banner, when it has one).
	got := hostShell(t, `fb=$1; exec 4<"$fb/out"`+ttyAsk+`
		ask true >/dev/null
		echo "tty $(ask tty)"
		echo "size $(ask 'stty size')"
		echo 100x30 >"$fb/winsize"
		until grep -q '"cols":100' "$fb/status.json"; do sleep 0.1; done
		echo "resized $(ask 'stty size')"`, c.dir)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "tty /dev/pts/") || lines[1] != "size 20 90" || lines[2] != "resized 30 100" {
		t.Fatalf("the shell on the container's terminal answered %q, want tty /dev/pts/N, size 20 90, resized 30 100", lines)
	}
	pid := c.hostPID()
	if masters, slaves, _ := terminalFDs(pid); len(masters) != 1 || slaves != 0 {
		t.Errorf("agent holds %d masters and %d slaves, want 1 and 0:\n%s", len(masters), slaves, fdTargets(strconv.Itoa(pid)))
	}

	// A job left on the terminal of a shell that exits goes with it; the
	// next shell (exit 3: restarted) runs on a fresh terminal.
	got = hostShell(t, `fb=$1; exec 4<"$fb/out"`+ttyAsk+`
		ask 'sleep 1000 & echo job' >/dev/null
		printf 'exit 3\n' >"$fb/in"
		until grep -q '"starts":2' "$fb/status.json"; do sleep 0.1; done
		ask 'ps'`, c.dir)
	if strings.Contains(got, "sleep 1000") {
		t.Errorf("the old terminal's job survives its shell's restart:\n%s", got)
	}

	// Ended by its HUP, not killed at the stop timeout (137).
	docker(t, "stop", "-t", "15", c.name)
	if code := c.exitCode(hangTimeout); code != 129 {
		t.Errorf("container exited with %d after docker stop, want 129 (the shell ended by HUP)", code)
	}
}
