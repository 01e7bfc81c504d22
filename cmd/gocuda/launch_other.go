//go:build !unix

package main

import (
	"fmt"
	"os"
	"os/exec"
)

// Without process groups and signals (Windows), a rank can only be
// interrupted or killed.
var forwardedSignals = []os.Signal{os.Interrupt}

var termSignal os.Signal = os.Kill

func ownGroup(*exec.Cmd) {}

func signalGroup(p *os.Process, sig os.Signal) {
	if sig == os.Kill || p.Signal(sig) != nil {
		p.Kill()
	}
}

func howEnded(ps *os.ProcessState, err error) (int, string) {
	if ps == nil {
		return 1, fmt.Sprintf("could not be waited for: %v", err)
	}
	if c := ps.ExitCode(); c != 0 {
		return c, fmt.Sprintf("exited with code %d", c)
	}
	return 0, "exited with code 0"
}
