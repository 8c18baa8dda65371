package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/replayspec/replayspec/spec"
)

// Every file a command reads from its user (specs, traces, results, the
// --xfail, --flakes and --baseline lists) goes through readInput: read
// with a size cap, and given up on when the command is interrupted while
// the read blocks (a FIFO nobody writes to), so that the first SIGINT or
// SIGTERM stops the command (issue 25: one blocked opening a FIFO in a
// spec folder did not stop). A spec found in a directory must be a
// regular file: a FIFO or a device there is refused, not opened.

// errReadInterrupted is a read given up on because the command was
// interrupted.
var errReadInterrupted = errors.New("interrupted while reading it")

// untilDone runs read, unless ctx ends first: then the read is left to
// finish (or block) on its own, and the process exits soon after.
func untilDone[T any](ctx context.Context, read func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := read()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		// A read that does not block is done in a moment: only one that
		// blocks is given up on.
		select {
		case r := <-ch:
			return r.v, r.err
		case <-time.After(readGrace):
			var zero T
			return zero, errReadInterrupted
		}
	}
}

// readGrace is how long an interrupted command still waits for a read (a
// variable: TestDiffStopsWhenInterrupted raises it, since on a loaded
// machine under -race a plain file's read can outlast 100 ms).
var readGrace = 100 * time.Millisecond

// readInput reads path, at most limit bytes; errors name the file.
func readInput(ctx context.Context, path string, limit int64) ([]byte, error) {
	data, err := untilDone(ctx, func() ([]byte, error) { return spec.ReadFile(path, limit) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, cause(err))
	}
	return data, nil
}

// regularInDir refuses a file found in a directory that is not a regular
// file: opening a FIFO blocks until someone writes to it.
func regularInDir(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, cause(err))
	}
	if !fi.Mode().IsRegular() {
		return notRegular{fmt.Sprintf("%s is a %s, not a spec file: a directory's *.yaml must be regular files (name it alone to read it anyway)", path, fileKind(fi.Mode()))}
	}
	return nil
}

// notRegular is a special file found in a directory; its message says
// what to do.
type notRegular struct{ msg string }

func (n notRegular) Error() string { return n.msg }

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// loadHint says what to do about specs that did not load: a path that
// does not exist is not fixed by editing a spec.
func loadHint(err error) string {
	if errors.Is(err, errReadInterrupted) {
		return ""
	}
	missing, other := false, false
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var nr notRegular
		switch {
		case errors.Is(e, fs.ErrNotExist):
			missing = true
		case errors.As(e, &nr): // its message says what to do
		default:
			other = true
		}
	}
	walk(err)
	hint := ""
	if missing {
		hint = "Check the path: name spec files (*.yaml) or directories of them ('replayspec list' shows the built-in library, which 'replayspec run' runs with none)."
	}
	if other {
		if hint != "" {
			hint += "\n"
		}
		hint += "Fix the spec (docs/spec-format.md lists every key), or check one file with 'replayspec validate FILE'."
	}
	return hint
}
