//go:build !unix

package exectarget

import (
	"fmt"
	"os/exec"
	"syscall"
)

// ownProcessGroup: without process groups, killing the driver is the best
// this platform offers (exec.Cmd's default Cancel).
func ownProcessGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error { return nil }

func signalName(sig syscall.Signal) string { return fmt.Sprintf("signal %d (%s)", int(sig), sig) }
