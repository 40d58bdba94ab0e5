//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// startREPL starts the ask part's floor: python3 -i -q with its stdin on
// one pipe and its stdout and stderr (where its prompts go) on another,
// as -stderr out gives the agent's child, and reads up to its first
// prompt. It asks gap after each answer.
func (b *bench) startREPL(gap time.Duration) (*asker, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.tools["python3"], "-i", "-q")
	cmd.Stdout, cmd.Stderr = outW, outW
	in, err := cmd.StdinPipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	err = cmd.Start()
	outW.Close()
	if err != nil {
		outR.Close()
		return nil, fmt.Errorf("start python3: %w", err)
	}
	stop := func() error {
		in.Close() // end of input: python3 exits
		err := waitOrKill(cmd, stopPatience)
		outR.Close()
		return err
	}
	if _, err := readToPrompt(outR); err != nil {
		stop()
		return nil, err
	}
	ask := func() (string, error) {
		if _, err := in.Write([]byte(askQuestion + "\n")); err != nil {
			return "", err
		}
		return readToPrompt(outR)
	}
	return &asker{ask: timedAfter(gap, ask), want: askAnswer, close: stop}, nil
}

// readToPrompt reads until what came ends with python3's prompt, and
// returns it less the prompt.
func readToPrompt(out *os.File) (string, error) {
	out.SetReadDeadline(time.Now().Add(time.Minute))
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte(pyPrompt)) {
		n, err := out.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return "", fmt.Errorf("python3 before its prompt: %w (read %q)", err, got)
		}
	}
	return string(bytes.TrimSuffix(got, []byte(pyPrompt))), nil
}
