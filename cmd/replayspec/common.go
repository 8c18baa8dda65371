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
	"time"

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
			return nil, usageError(stderr, h.name, "%s", flagProblem(fs, err)), false
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

// flagProblem words an error of Go's flag package as what is wrong and
// what to give instead: the option as --name, the kind of value it takes,
// and for an unknown option the nearest known one.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if near := nearestFlag(fs, name); near != "" {
			return fmt.Sprintf("unknown option --%s: did you mean --%s?", name, near)
		}
		return fmt.Sprintf("unknown option --%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name = strings.TrimLeft(name, "-")
		return fmt.Sprintf("--%s needs a value (--%s VALUE or --%s=VALUE)", name, name, name)
	}
	var value, name string
	if _, scanErr := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); scanErr == nil || name != "" {
		name = strings.TrimSuffix(name, ":")
		if f := fs.Lookup(name); f != nil {
			return fmt.Sprintf("--%s %q: want %s", name, value, valueKind(f))
		}
	}
	if _, scanErr := fmt.Sscanf(msg, "invalid boolean value %q for -%s", &value, &name); scanErr == nil || name != "" {
		name = strings.TrimSuffix(name, ":")
		return fmt.Sprintf("--%s=%q: want true or false (or --%s alone for true)", name, value, name)
	}
	return msg
}

// valueKind says what a flag's value must be, by its type.
func valueKind(f *flag.Flag) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a value as --help describes it"
	}
	switch g.Get().(type) {
	case uint, uint64:
		return "a whole number, 0 or more"
	case int, int64:
		return "a whole number"
	case float64:
		return "a number"
	case time.Duration:
		return "a duration such as 500ms, 30s or 2m"
	case bool:
		return "true or false"
	}
	return "a value as --help describes it"
}

// nearestFlag is the option whose name is nearest name (at most two edits,
// or name a prefix of it), or "".
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
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
	if errors.Is(err, errReadInterrupted) {
		// Not bad input: the command was stopped (exit 130 or 143).
		fmt.Fprintf(stderr, "replayspec %s: %s\n", cmd, report.Name(err.Error()))
		return exitFail
	}
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

// maxOptionMiB bounds the options that take MiB (--memory-budget,
// --max-input-mib): 2^40 MiB (an exbibyte), far above any machine, below
// where the count of bytes overflows.
const maxOptionMiB = 1 << 40

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
