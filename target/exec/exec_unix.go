//go:build unix

package exectarget

import (
	"fmt"
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

// signalNames are the signals a driver is likely to die of, by name.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

// signalName names a signal as a person would look it up: "SIGKILL
// (signal 9: killed)", not the bare "killed".
func signalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return fmt.Sprintf("%s (signal %d: %s)", n, int(sig), sig)
	}
	return fmt.Sprintf("signal %d (%s)", int(sig), sig)
}
