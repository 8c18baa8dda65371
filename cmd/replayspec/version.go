package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

func init() {
	register(command{name: "version", summary: "print the module version and the VCS revision it was built from", run: versionCmd})
}

var versionHelp = help{
	name:     "version",
	synopsis: "",
	about: `Prints replayspec's module version, the VCS revision and time it was built
from (with "+dirty" when the work tree had changes) and the Go version, from
the binary's build information. 'replayspec --version' is the same.`,
	examples: []string{"replayspec version", "replayspec --version"},
}

func versionCmd(_ context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(versionHelp.name)
	rest, code, ok := parseFlags(fs, versionHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "version", "takes no arguments, got %q", rest[0])
	}
	fmt.Fprintln(stdout, versionLine())
	return exitOK
}

// versionLine is "replayspec VERSION (REVISION[+dirty], TIME) GO".
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "replayspec (no build information: built without module support)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	vcs := "no VCS revision: built outside a git clone (a git worktree gives none) or with -buildvcs=false; 'make install' in a clone stamps it"
	if rev != "" {
		vcs = rev + dirty
		if at != "" {
			vcs += ", " + at
		}
	}
	return fmt.Sprintf("replayspec %s (%s) %s", version, vcs, bi.GoVersion)
}
