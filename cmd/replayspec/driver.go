package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/driver/protocol"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/target"
)

func init() {
	register(command{
		name:    "driver",
		summary: "serve the reference engine behind the driver protocol (stdin: spec, stdout: trace)",
		run:     runDriver,
	})
}

// driverStdin is where the driver reads its spec; tests replace it.
var driverStdin io.Reader = os.Stdin

// driverVersion is this build's version, named in the driver's handshake.
var driverVersion = "dev"

func runDriver(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	faultList := fs.String("fault", "", "plant known bugs in the reference engine: comma-separated fault names (docs/faults.md)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: replayspec driver [--fault NAME,...]

Speaks the driver protocol (docs/driver-protocol.md) once: writes its
handshake, reads one spec as JSON on stdin, runs it on the reference engine
on the simulator and writes the trace as NDJSON on stdout, then an end line.
With stdin closed empty it writes the handshake only.

  replayspec run --target exec:"replayspec driver" specs/
  replayspec run --target exec:"replayspec driver --fault skip_restore" specs/

Exit status: 0 the trace was written, 1 the engine failed (the trace is still
written), 2 bad usage or an unreadable spec.

Options:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "replayspec driver: unexpected arguments %q: the spec comes on stdin\n", fs.Args())
		return exitUsage
	}
	faults, err := replay.ParseFaults(*faultList)
	if err != nil {
		fmt.Fprintf(stderr, "replayspec driver: %v\n", err)
		return exitUsage
	}
	impl := protocol.Implementation{Name: "replayspec reference engine", Version: driverVersion}
	if *faultList != "" {
		impl.Name += " (faults: " + *faultList + ")"
	}
	err = driver.Serve(context.Background(), driverStdin, stdout, impl, target.Sim{}, target.Options{Faults: faults})
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
