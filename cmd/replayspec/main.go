// Command replayspec runs kernel-replay conformance specs against the
// reference engine on a simulator, real hardware or an external port, and
// checks recorded traces. Run `replayspec help` for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/replayspec/replayspec/target/exec"
)

// Exit codes, the same for every command.
const (
	exitOK       = 0 // everything holds
	exitFail     = 1 // a check failed
	exitUsage    = 2 // bad input or usage
	exitInternal = 3 // replayspec itself broke (a bug): never "bad input"
	exitIO       = 4 // an output could not be written (a full disk, no permission): it is left whole or not at all
)

// command is one subcommand. Each lives in its own file and registers
// itself, so that commands can be added without touching this file. ctx
// is cancelled on SIGINT or SIGTERM: a command stops, writes what it
// finished and returns.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, e env) int
}

// env is what a command takes from the process around it, besides its
// arguments: the standard streams, the environment variables and the
// working directory. main passes the process's own; the CLI scripts
// (script_test.go) run commands in the test process with a script's, so
// that a command costs no process start. Files named on the command line
// are still opened from the process's working directory (the libraries
// open them): the scripts' harness makes it dir while a command runs.
type env struct {
	dir            string // the working directory: --last-failed keeps its record per directory
	lookupEnv      func(key string) (string, bool)
	stdin          io.Reader
	stdout, stderr io.Writer
}

// getenv is os.Getenv of the command's environment.
func (e env) getenv(key string) string {
	v, _ := e.lookupEnv(key)
	return v
}

// processEnv is the process's own env, with stdout and stderr.
func processEnv(stdout, stderr io.Writer) env {
	dir, _ := os.Getwd()
	return env{dir: dir, lookupEnv: os.LookupEnv, stdin: os.Stdin, stdout: stdout, stderr: stderr}
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

func main() {
	exectarget.ReaperMain() // a driver's reaper does its job here and exits
	os.Exit(mainProcess())
}

// mainProcess is main without its exit, for testscript.
func mainProcess() int {
	// A crash that recover cannot catch (a goroutine's panic, the
	// runtime's own fatal errors) must not exit 2, which means bad input:
	// with "crash" the runtime aborts (SIGABRT, 134 in a shell) instead.
	if os.Getenv("GOTRACEBACK") == "" {
		debug.SetTraceback("crash")
		noCoreDumps()
	}
	ctx, stop := interruptible()
	defer stop()
	code := mainEnv(ctx, os.Args[1:], processEnv(os.Stdout, os.Stderr))
	if sig := interruptedBy(ctx); sig != nil {
		return 128 + int(sig.(syscall.Signal))
	}
	return code
}

// signalCause is the cause of a context cancelled by a signal.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return "interrupted by " + signalName(s.sig) }

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// interruptible returns a context that the first SIGINT or SIGTERM
// cancels: the command stops, the exec target ends each driver's process
// group as its context ends, what finished is written, and the exit
// status is 130 or 143. A second signal ends every driver's group
// (exectarget.KillAll) and exits at once.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(signalCause{sig})
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			fmt.Fprintf(os.Stderr, "\nreplayspec: %s again: stopping now, without writing the rest\n", signalName(sig))
			exectarget.KillAll() // no driver outlives the runner
			removeTemps()        // no half-written output either
			os.Exit(128 + int(sig.(syscall.Signal)))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interruptedBy is the signal that cancelled ctx, or nil.
func interruptedBy(ctx context.Context) os.Signal {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.sig
	}
	return nil
}

// mainWith runs a command line with the process's environment and
// working directory, its output to stdout and stderr.
func mainWith(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return mainEnv(ctx, args, processEnv(stdout, stderr))
}

// mainEnv runs a command line in e.
func mainEnv(ctx context.Context, args []string, e env) (code int) {
	stdout, stderr := e.stdout, e.stderr
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "replayspec: internal error (a bug in replayspec, not in your input): %v\n%s\nPlease report it with the command that caused it.\n", p, debug.Stack())
			code = exitInternal
		}
	}()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run(ctx, []string{"--help"}, e)
			}
		}
		usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "replayspec: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, args[1:], e)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "replayspec: conformance specs for GPU kernel replay")
	fmt.Fprintln(w, "\nUsage: replayspec COMMAND [options] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nOptions take one dash or two (-run or --run), their value after a space or = (--format json, --format=json).")
	fmt.Fprintln(w, exitStatusHelp)
	fmt.Fprintln(w, "Run 'replayspec COMMAND --help' for a command's options and examples.")
}

const exitStatusHelp = "Exit status: 0 all checks hold, 1 a check failed, 2 bad input or usage, 3 replayspec itself broke,\n4 an output could not be written (disk full, no permission; the file is left whole or removed);\n130 or 143 interrupted (SIGINT, SIGTERM) after writing what finished."

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
