//go:build unix

package exectarget

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the driver in a process group of its own so that a
// kill reaches whatever it started (a shell script's children too).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills the driver's process group; a group with no member left
// is not an error.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}
