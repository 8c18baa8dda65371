//go:build !unix

package exectarget

import "os/exec"

// ownProcessGroup: without process groups, killing the driver is the best
// this platform offers (exec.Cmd's default Cancel).
func ownProcessGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error { return nil }
