package exectarget

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// live is every driver process running now, so that an interrupted runner
// ends them all, each with its process group.
var live = &liveSet{cmds: map[*exec.Cmd]func(){}}

type liveSet struct {
	mu   sync.Mutex
	cmds map[*exec.Cmd]func() // how to end each: stop its reaper, or kill its group
}

func (l *liveSet) add(c *exec.Cmd, end func()) {
	l.mu.Lock()
	l.cmds[c] = end
	l.mu.Unlock()
}

func (l *liveSet) remove(c *exec.Cmd) {
	l.mu.Lock()
	delete(l.cmds, c)
	l.mu.Unlock()
}

// KillAll ends every running driver with everything it started: its
// reaper is told to (and, once this process has exited, its parent-death
// signal tells it again), or its process group is killed.
func KillAll() {
	live.mu.Lock()
	defer live.mu.Unlock()
	for _, end := range live.cmds {
		end()
	}
}

// HandleInterrupts makes SIGINT (Ctrl-C) and SIGTERM (a CI runner giving
// up) end every driver's process group before this process exits, with
// status 128 + the signal's number. Drivers run in process groups of
// their own, so the terminal's SIGINT does not reach them by itself. The
// returned function stops the handling.
func HandleInterrupts() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			KillAll()
			code := 130
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
