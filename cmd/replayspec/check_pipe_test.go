//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A trace that comes through a pipe is read as it comes: it is judged like
// the file; one the oracles must see whole is refused as soon as it passes
// the budget, and a bad one at its first bad line, without the rest of it
// being read (issue 23 item 2).
func TestCheckReadsAPipeWithinItsBudget(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ndjson")
	if code, out, errs := cli(t, "run", "--trace-out", good, tempFile(t, dir, "tiny.yaml", okSpec)); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}

	// feed writes chunks of data into the FIFO until the reader closes it
	// or n bytes are written; it returns how many were.
	feed := func(data []byte, n int) <-chan int {
		wrote := make(chan int, 1)
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				wrote <- -1
				return
			}
			defer w.Close()
			total := 0
			for total < n {
				k, err := w.Write(data[:min(len(data), n-total)])
				total += k
				if err != nil {
					break // the reader went away: EPIPE
				}
			}
			wrote <- total
		}()
		return wrote
	}

	wrote := feed(data, len(data))
	code, out, errs := cli(t, "check", fifo)
	if code != exitOK || !strings.Contains(out, "PASS tiny") {
		t.Errorf("a good trace through a pipe: exit %d\n%s%s", code, out, errs)
	}
	if n := <-wrote; n != len(data) {
		t.Errorf("the writer wrote %d of %d bytes", n, len(data))
	}

	// A trace the oracles must see whole is held to the budget: past its
	// first segment (4,096 events, then a completion), an event names the
	// dispatch that segment closed, so the stream gives up there; what
	// follows is copied up to the budget of 1 MiB and refused past it, and
	// the writer is stopped by the closed pipe long before it has written
	// everything.
	lib := filepath.Join(dir, "lib.ndjson")
	if code, out, errs := cli(t, "run", "--trace-out", lib, "-run", "^fixed-three-passes$"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	libData, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := bytes.Cut(libData, []byte("\n"))
	looksBack := append(bytes.Clone(header), '\n')
	seq := 0
	event := func(format string, args ...any) {
		seq++
		looksBack = fmt.Appendf(looksBack, `{"seq":%d,`+format+"}\n", append([]any{seq}, args...)...)
	}
	event(`"type":"app_dispatch","thread":1,"label":"a"`)
	for range 4096 {
		event(`"type":"mem_read","thread":1`)
	}
	event(`"type":"app_complete","thread":1,"label":"a"`)
	event(`"type":"app_dispatch","thread":1,"label":"b"`)
	event(`"type":"app_complete","thread":1,"label":"a"`)
	for len(looksBack) < 3<<20 {
		event(`"type":"mem_read","thread":1`)
	}
	wrote = feed(looksBack, 64<<20)
	code, _, errs = cli(t, "check", "--max-input-mib", "1", fifo)
	if code != exitUsage {
		t.Errorf("over the budget: exit %d, want %d", code, exitUsage)
	}
	wantAll(t, "stderr", errs, "trace.fifo: more than 1 MiB read, over the budget of 1 MiB a trace may hold: raise --max-input-mib")
	if n := <-wrote; n >= 64<<20 || n < 0 {
		t.Errorf("the writer wrote %d bytes: the reader did not stop at the budget", n)
	}

	// The same in a file is refused by its size once the stream gives up,
	// the rest unread.
	file := tempFile(t, dir, "looks-back.ndjson", string(looksBack))
	code, _, errs = cli(t, "check", "--max-input-mib", "1", file)
	if code != exitUsage {
		t.Errorf("a file over the budget: exit %d, want %d", code, exitUsage)
	}
	wantAll(t, "stderr", errs, "looks-back.ndjson: 3 MiB, over the budget of 1 MiB a trace may hold: raise --max-input-mib")

	// One judged as it comes stops at its first bad line, and the writer
	// with it.
	line := bytes.Repeat([]byte(`{"seq":1,"type":"api"}`+"\n"), 1<<12)
	wrote = feed(line, 64<<20)
	code, _, errs = cli(t, "check", fifo)
	if code != exitUsage {
		t.Errorf("a bad trace: exit %d, want %d", code, exitUsage)
	}
	wantAll(t, "stderr", errs, "trace.fifo:1: header:")
	if n := <-wrote; n >= 64<<20 || n < 0 {
		t.Errorf("the writer wrote %d bytes: the reader did not stop at the bad line", n)
	}
	if _, err := os.Stat(fifo); errors.Is(err, os.ErrNotExist) {
		t.Error("the FIFO is gone")
	}
}
