//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// forwardedSignals are passed on to every rank.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// termSignal asks a rank to stop.
var termSignal os.Signal = syscall.SIGTERM

// ownGroup starts the rank in a process group of its own, so that a
// signal reaches what the rank started too, and a terminal's Ctrl-C
// reaches the ranks once, through the launcher.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the rank's process group.
func signalGroup(p *os.Process, sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		p.Signal(sig)
		return
	}
	if err := syscall.Kill(-p.Pid, s); err != nil && !errors.Is(err, syscall.ESRCH) {
		p.Signal(sig) // the group is gone or not ours: the process alone
	}
}

// howEnded is a rank's exit code (128+N for signal N) and how it ended,
// in words.
func howEnded(ps *os.ProcessState, err error) (int, string) {
	if ps == nil {
		return 1, fmt.Sprintf("could not be waited for: %v", err)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	if c := ps.ExitCode(); c != 0 {
		return c, fmt.Sprintf("exited with code %d", c)
	}
	return 0, "exited with code 0"
}
