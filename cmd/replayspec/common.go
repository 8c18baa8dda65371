package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
)

// help describes a command for its --help: a synopsis, a paragraph and a
// few examples.
type help struct {
	name     string
	synopsis string // arguments after the command name
	about    string
	examples []string
}

// newFlags returns a FlagSet that reports errors to nobody: parseFlags
// words them itself, so that every message says what to do next.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// printHelp writes the command's usage, options and examples. Options
// are listed in their --name form; Go's flag package takes -name as well.
func printHelp(w io.Writer, fs *flag.FlagSet, h help) {
	fmt.Fprintf(w, "Usage: replayspec %s %s\n\n%s\n", h.name, h.synopsis, strings.TrimSpace(h.about))
	var lines [][2]string
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if len(f.Name) == 1 {
			left = "-" + f.Name
		}
		if name != "" {
			left += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			usage += " (default " + f.DefValue + ")"
		}
		lines = append(lines, [2]string{left, usage})
		width = max(width, len(left))
	})
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nOptions (one dash or two: -run or --run; a value after a space or =):")
		for _, l := range lines {
			fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
		}
	}
	if len(h.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range h.examples {
			fmt.Fprintln(w, "  "+e)
		}
	}
	fmt.Fprintln(w, "\n"+exitStatusHelp)
}

// parseFlags parses args, allowing flags after the positional arguments
// (`run specs/ --format json`); "--" ends the flags. On --help it prints
// the usage to stdout; on an error it says what was wrong. ok is false
// when the command should return code.
func parseFlags(fs *flag.FlagSet, h help, args []string, stdout, stderr io.Writer) (rest []string, code int, ok bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, h)
			return nil, exitOK, false
		}
		if err != nil {
			return nil, usageError(stderr, h.name, "%v", err), false
		}
		left := fs.Args()
		consumed := len(args) - len(left)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(rest, left...), 0, true
		}
		if len(left) == 0 {
			return rest, 0, true
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// usageError reports a usage problem and returns exitUsage.
func usageError(stderr io.Writer, cmd, format string, a ...any) int {
	fmt.Fprintf(stderr, "replayspec %s: %s\n", cmd, report.Clean(fmt.Sprintf(format, a...), false))
	fmt.Fprintf(stderr, "Run 'replayspec %s --help' for its options and examples.\n", cmd)
	return exitUsage
}

// inputError reports bad input (a file that is missing or wrong) with a
// hint, and returns exitUsage.
func inputError(stderr io.Writer, cmd string, err error, hint string) int {
	lines := strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = report.Name(l) // a name from outside cannot forge a line
	}
	if len(lines) == 1 {
		fmt.Fprintf(stderr, "replayspec %s: %s\n", cmd, lines[0])
	} else {
		fmt.Fprintf(stderr, "replayspec %s: %d problems:\n%s\n", cmd, len(lines), indent(strings.Join(lines, "\n"), "  "))
	}
	if hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	return exitUsage
}

// formats are the report formats of run and check.
var formats = []string{"text", "json", "junit"}

func checkFormat(f string, allowed []string) error {
	for _, a := range allowed {
		if f == a {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q: use %s", f, strings.Join(allowed, ", "))
}

// exitFor is the exit status of a set of results: 1 if any failed or
// could not run, else 0.
func exitFor(results []runner.Result) int {
	for _, r := range results {
		if v := r.Verdict(); v == runner.Fail || v == runner.Error {
			return exitFail
		}
	}
	return exitOK
}

// isTerminal reports whether w is a terminal (a character device), where a
// progress line rewritten with \r is welcome.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// maxFileNameBytes is the budget of a file name made from a spec's name:
// file systems take 255 bytes, and the name gets suffixes (".run12",
// ".ndjson", ".partial").
const maxFileNameBytes = 200

// fileName makes a spec name safe as a file name: its letters, digits and
// -_. kept, the rest _, and a name over maxFileNameBytes cut and told from
// others by a hash of the whole name (issue 25: a 5,000-character name
// ran, then its trace could not be written).
func fileName(name string) string {
	if name == "" {
		return "unnamed"
	}
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	if len(safe) > maxFileNameBytes {
		sum := sha256.Sum256([]byte(name))
		safe = safe[:maxFileNameBytes-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return safe
}
