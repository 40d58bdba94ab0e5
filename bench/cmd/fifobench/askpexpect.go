//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// pexpectDriver is the ask part's pexpect contender, run with python3 -c
// and the spacing in seconds: pexpect.replwrap.python() drives python3 -q
// on a terminal, tuned as its users tune it (delaybeforesend off: by
// default pexpect sleeps 50 ms before every send). It says "ready" once
// the REPL is, then runs each line of its stdin as one command, the
// spacing after it took the line, and prints, as one JSON object on a
// line, the answer and the seconds run_command took, timed in the script
// itself so that the harness's pipe to it does not count, nor the wait.
const pexpectDriver = `import json, sys, time
from pexpect import replwrap
gap = float(sys.argv[1])
repl = replwrap.python(sys.executable + " -q")
repl.child.delaybeforesend = None
print("ready", flush=True)
for line in sys.stdin:
    if gap > 0:
        time.sleep(gap)
    begin = time.perf_counter()
    out = repl.run_command(line.rstrip("\n"))
    took = time.perf_counter() - begin
    print(json.dumps({"answer": out, "took": took}), flush=True)
repl.child.close(force=True)
`

// hasPexpect says whether python3 can import pexpect's replwrap.
func hasPexpect(python string) bool {
	return python != "" && exec.Command(python, "-c", "import pexpect.replwrap").Run() == nil
}

// startPexpect starts the pexpect driver and waits until its REPL is
// ready; it asks gap after each answer. Its answers come from a terminal:
// "\r\n" is taken as "\n".
func (b *bench) startPexpect(gap time.Duration) (*asker, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.tools["python3"], "-c", pexpectDriver, strconv.FormatFloat(gap.Seconds(), 'f', -1, 64))
	cmd.Stdout, cmd.Stderr = outW, os.Stderr
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	outW.Close()
	if err != nil {
		outR.Close()
		return nil, fmt.Errorf("start the pexpect driver: %w", err)
	}
	stop := func() error {
		in.Close() // end of input: the driver closes its REPL and exits
		err := waitOrKill(cmd, stopPatience)
		outR.Close()
		return err
	}
	out := bufio.NewReader(outR)
	if line, err := readLine(outR, out); err != nil || line != "ready" {
		stop()
		return nil, fmt.Errorf("pexpect driver: %q, %v instead of ready", line, err)
	}
	ask := func() (string, time.Duration, error) {
		if _, err := io.WriteString(in, askQuestion+"\n"); err != nil {
			return "", 0, err
		}
		line, err := readLine(outR, out)
		if err != nil {
			return "", 0, fmt.Errorf("pexpect driver: %w", err)
		}
		var got struct {
			Answer string  `json:"answer"`
			Took   float64 `json:"took"` // seconds
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			return "", 0, fmt.Errorf("pexpect driver: %q: %w", line, err)
		}
		return strings.ReplaceAll(got.Answer, "\r\n", "\n"), time.Duration(got.Took * float64(time.Second)), nil
	}
	return &asker{ask: ask, want: askAnswer, close: stop}, nil
}

// readLine reads one line from r, which buffers f, without its newline,
// giving up after a minute.
func readLine(f *os.File, r *bufio.Reader) (string, error) {
	f.SetReadDeadline(time.Now().Add(time.Minute))
	line, err := r.ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}
