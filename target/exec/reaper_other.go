//go:build !linux

package exectarget

import (
	"context"
	"errors"
	"os"
	"os/exec"
)

// Without PR_SET_CHILD_SUBREAPER there is no reaper: the runner kills the
// driver's process group (reaper_linux.go says what that misses).
var reaperOn bool

// ReaperMain does nothing here; on Linux it starts the reaper
// (reaper_linux.go).
func ReaperMain() {}

func reaperCommand(ctx context.Context, argv []string) (*exec.Cmd, *os.File, error) {
	return nil, nil, errors.New("no reaper on this system")
}

func stopReaper(cmd *exec.Cmd) error { return nil }

func readStatus(r *os.File) (error, bool) { return nil, false }
