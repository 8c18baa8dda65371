// Command replayspec runs kernel-replay conformance specs against the
// reference engine on a simulator, real hardware or an external port, and
// checks recorded traces. Run `replayspec help` for the commands.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/internal/exectarget"
)

// Exit codes, the same for every command.
const (
	exitOK    = 0 // everything holds
	exitFail  = 1 // a check failed
	exitUsage = 2 // bad input or usage
)

// command is one subcommand. Each lives in its own file and registers
// itself, so that commands can be added without touching this file.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

func main() {
	// An interrupted run ends every driver it started (docs/driver-protocol.md).
	stop := exectarget.HandleInterrupts()
	code := mainWith(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func mainWith(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"--help"}, stdout, stderr)
			}
		}
		usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "replayspec: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
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
	fmt.Fprintln(w, "\nExit status: 0 all checks hold, 1 a check failed, 2 bad input or usage.")
	fmt.Fprintln(w, "Run 'replayspec COMMAND --help' for a command's options and examples.")
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
