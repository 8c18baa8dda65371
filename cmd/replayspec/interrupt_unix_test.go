//go:build unix

package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptWhileReadingAFIFO: the first SIGTERM stops a command whose
// read blocks (a FIFO nobody writes to), with 143 and a message naming
// the file (issue 25: a command blocked opening a FIFO did not stop). A
// FIFO found in a directory is not opened at all.
func TestInterruptWhileReadingAFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process")
	}
	dir := t.TempDir()
	ok := tempFile(t, dir, "a.yaml", okSpec)
	fifo := filepath.Join(dir, "z.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if code, out, _ := cli(t, "validate", dir); code != exitUsage || !strings.Contains(out, "z.yaml is a named pipe (FIFO), not a spec file") {
		t.Errorf("a FIFO in a directory: exit %d, want it refused by name:\n%s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := replayspecBin(t, ctx, "validate", ok, fifo)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if got, err := readUntil(out, "ok "+ok); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	time.Sleep(100 * time.Millisecond) // now opening the FIFO
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit %v, want 143\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "z.yaml: interrupted while reading it") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
