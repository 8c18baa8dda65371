package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
)

func init() {
	register(command{
		name:    "driver",
		summary: "serve the reference engine behind the driver protocol (spec on stdin, trace on stdout)",
		run:     runDriver,
	})
}

var driverHelp = help{
	name:     "driver",
	synopsis: "[--fault NAME,...] [--profile black-box|runtime|full]",
	about: `Speaks the driver protocol (docs/driver-protocol.md) once: writes its handshake,
reads one spec as JSON on stdin, runs it on the reference engine on the
simulator, writes the trace as NDJSON on stdout, then the end line {"end":N}.
With stdin closed empty it writes the handshake only (the runner's probe).
The engine failing is exit 1, the trace still written; an unreadable spec is 2.
--profile makes it a port that sees only that profile's sources: its
handshake says so and its traces keep only those events (default full).`,
	examples: []string{
		`replayspec run --target exec:"replayspec driver" specs/`,
		`replayspec run --target exec:"replayspec driver --fault skip_restore" specs/   # a port with a known bug`,
		`replayspec run --target exec:"replayspec driver --profile black-box" --matrix bb.md specs/`,
		`replayspec driver < /dev/null   # the handshake alone`,
	},
}

// driverVersion is this build's version, named in the driver's handshake.
var driverVersion = "dev"

func runDriver(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlags(driverHelp.name)
	faultList := fs.String("fault", "", "plant known engine bugs, comma-separated `NAME,...` (docs/faults.md)")
	profile := fs.String("profile", driver.ProfileFull, "report only what the `PROFILE` sees: black-box, runtime or full")
	rest, code, ok := parseFlags(fs, driverHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "driver", "unexpected arguments %q: the spec comes on stdin", rest)
	}
	if _, ok := driver.ProfileSources(*profile); !ok {
		return usageError(stderr, "driver", "--profile: unknown profile %q; known: %s, %s, %s", *profile, driver.ProfileBlackBox, driver.ProfileRuntime, driver.ProfileFull)
	}
	faults, err := replay.ParseFaults(*faultList)
	if err != nil {
		return usageError(stderr, "driver", "--fault: %v", err)
	}
	// The driver writes each event as it is recorded and keeps none
	// (driver.ServeAt on the simulator): a spec is charged what one
	// dispatch holds, and its runner's budget says the rest.
	defer spec.SetTraceStreamed(true)()
	impl := driver.Implementation{Name: "replayspec reference engine", Version: driverVersion}
	if *faultList != "" {
		impl.Name += " with faults " + *faultList
	}
	err = driver.ServeAt(ctx, e.stdin, stdout, impl, simtarget.Sim{Faults: faults}, target.Options{}, *profile)
	var se *driver.SpecError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &se):
		fmt.Fprintf(stderr, "replayspec driver: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "replayspec driver: %v\n", err)
	return exitFail
}
