package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/replayspec/replayspec/target/exec"
)

// TestMain makes the test binary `replayspec` too, for the scripts in
// testdata/script (each reads like a terminal session) and for the tests
// that run the command as a process (signals, crashes).
func TestMain(m *testing.M) {
	exectarget.ReaperMain() // this binary is the drivers' reaper too
	parseCases = memoParseCases()
	// --last-failed's record of the in-process runs stays out of the
	// user's cache (testscript.Main exits: the small file stays in TMPDIR).
	if os.Getenv("REPLAYSPEC_CACHE") == "" {
		os.Setenv("REPLAYSPEC_CACHE", filepath.Join(os.TempDir(), "replayspec-test-cache"))
	}
	// The drivers that commands run in this process start (exec: targets)
	// take its environment: a -race binary otherwise sleeps a second as it
	// exits.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	testscript.Main(m, map[string]func(){
		"replayspec": func() { os.Exit(mainProcess()) },
	})
}

// TestScripts runs testdata/script/*.txtar. UPDATE_SCRIPTS=1 rewrites
// their expected files from what the commands print.
func TestScripts(t *testing.T) {
	// Paths are made absolute here, once: while a script's command runs
	// in-process, the working directory is that script's (runInProcess).
	dir, err := filepath.Abs("testdata/script")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := filepath.Abs(library)
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") == "1",
		RequireExplicitExec: false,
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPLAYSPEC_CACHE", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("NO_COLOR", "")
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			env.Setenv("LIBRARY", lib)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"code":      cmdCode,
			"waitfor":   cmdWaitFor,
			"lines":     cmdLines,
			"jsonvalid": cmdJSONValid,
		},
	})
}

// cmdCode is `code N PROGRAM ARGS...`: run it, and want exit status N (or
// any of N,M,...). `code N replayspec ARGS...` runs the command in the test
// process (runInProcess): a -race process start for each of the scripts'
// ~150 commands was a third of their CPU. What needs a process of its own
// says `exec replayspec` (a signal, a background run, a full disk under
// ulimit, /dev/stdout); an exec: target's driver is a process either way.
func cmdCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: code N[,M...] program [args...]")
	}
	var wants []int
	for _, w := range strings.Split(args[0], ",") {
		n, err := strconv.Atoi(w)
		if err != nil {
			ts.Fatalf("code %q: not a number", args[0])
		}
		wants = append(wants, n)
	}
	got := 0
	if args[1] == "replayspec" {
		got = runInProcess(ts, args[2:])
	} else {
		err := ts.Exec(args[1], args[2:]...)
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			got = ee.ExitCode()
		case err != nil:
			ts.Fatalf("%v", err)
		}
	}
	if !slices.Contains(wants, got) {
		ts.Fatalf("exit status %d, want %s", got, args[0])
	}
}

// inProcessMu holds the commands that scripts run in the test process to
// one at a time: a command opens the files it is named from the process's
// working directory, which runInProcess sets to the script's. Only the
// scripts (parallel subtests of TestScripts) run while it is held; the
// commands they exec are given their directory and need no lock.
var inProcessMu sync.Mutex

// runInProcess runs `replayspec ARGS` in the test process as the script
// would run it as a process: in its directory, with its environment,
// nothing on stdin, its stdout and stderr for the script's stdout and
// stderr assertions. It returns the exit status.
func runInProcess(ts *testscript.TestScript, args []string) int {
	inProcessMu.Lock()
	defer inProcessMu.Unlock()
	dir := ts.MkAbs(".")
	back, err := os.Getwd()
	if err != nil {
		ts.Fatalf("%v", err)
	}
	if err := os.Chdir(dir); err != nil {
		ts.Fatalf("%v", err)
	}
	defer func() {
		if err := os.Chdir(back); err != nil {
			panic(err) // every other test would run in the wrong place
		}
	}()
	var mu sync.Mutex // a process's stdout takes writes from any goroutine
	e := env{
		dir: dir,
		// A script's variable set to "" reads as unset: testscript
		// tells them apart to no one.
		lookupEnv: func(key string) (string, bool) { v := ts.Getenv(key); return v, v != "" },
		stdin:     strings.NewReader(""),
		stdout:    lockedWriter{&mu, ts.Stdout()},
		stderr:    lockedWriter{&mu, ts.Stderr()},
	}
	return mainEnv(context.Background(), args, e)
}

// lockedWriter writes to w holding mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// cmdWaitFor is `waitfor FILE [REGEXP]`: wait until it exists (a streamed
// result), and holds a match of REGEXP when one is given, for at most two
// minutes.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfor file [regexp]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		re = regexp.MustCompile(args[1])
	}
	path := ts.MkAbs(args[0])
	for range 1200 {
		if b, err := os.ReadFile(path); err == nil && (re == nil || re.Match(b)) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if re != nil {
		ts.Fatalf("%s never held a match of %s", args[0], re)
	}
	ts.Fatalf("%s never appeared", args[0])
}

// cmdLines is `lines N FILE`: the file (or stdout) has exactly N lines.
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines N file")
	}
	want, _ := strconv.Atoi(args[0])
	text := ts.ReadFile(args[1])
	got := strings.Count(text, "\n")
	if (got == want) == neg {
		ts.Fatalf("%s has %d lines, want %d", args[1], got, want)
	}
}

// cmdJSONValid is `jsonvalid FILE`: the file is one whole JSON document.
func cmdJSONValid(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonvalid file")
	}
	switch valid := json.Valid([]byte(ts.ReadFile(args[0]))); {
	case !valid && !neg:
		ts.Fatalf("%s is not one whole JSON document", args[0])
	case valid && neg:
		ts.Fatalf("%s is valid JSON", args[0])
	}
}

// replayspecBin runs the command as a process (the test binary, as
// testscript.Main arranged).
func replayspecBin(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	path, err := exec.LookPath("replayspec")
	if err != nil {
		t.Fatalf("replayspec is not on PATH: %v", err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "REPLAYSPEC_CACHE="+t.TempDir())
	return cmd
}

// readUntil reads r line by line until a line contains want; it returns
// what it read.
func readUntil(r io.Reader, want string) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	line := ""
	for {
		n, err := r.Read(buf)
		if n > 0 {
			b.WriteByte(buf[0])
			line += string(buf[:1])
			if buf[0] == '\n' {
				if strings.Contains(line, want) {
					return b.String(), nil
				}
				line = ""
			}
		}
		if err != nil {
			return b.String(), fmt.Errorf("%q never came: %w", want, err)
		}
	}
}
