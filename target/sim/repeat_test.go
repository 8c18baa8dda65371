package simtarget_test

import (
	"context"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// repeated has repeated dispatches on two threads beside a listed one: a
// converging loop whose counters the tool keeps per repetition, a
// multi-packet submission with barriers between its kernel packets, and a
// dispatch of the tool's own written from a pass of each repetition.
const repeated = `
version: 1
name: repeated
requires: [indefinite, counters, concurrency, tool-actions, repeat]
agents:
  - {name: gpu0, kind: MI300}
contexts:
  - name: replay
    services: {kernel_replay: {}}
  - name: counters
    services: {counter_collection: {counters: [SQ_WAVES]}}
  - name: timing
    services: {kernel_trace: {}}
tool:
  plan:
    passes: 2
    actions:
      - {in: PASS_ENTER, pass: 1, call: dispatch, dispatch: side}
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64, fill: 1}
    - {name: c, agent: gpu0, elements: 4}
    - {name: s, agent: gpu0, kind: fine, elements: 16}
  dispatches:
    - {name: first, kernel: increment, agent: gpu0, args: [x]}
    - name: count
      kernel: atomic_counter
      agent: gpu0
      args: [c]
      grid: 256
      repeat: 4
      plan: {passes: 0, continue: {converge: {counter: SQ_WAVES, at_most: 5}}}
    - {name: pair, kernel: increment, agent: gpu0, thread: 2, args: [x], kernel_packets: 2, barriers_between: true, repeat: 3}
    - {name: last, kernel: increment, agent: gpu0, args: [x]}
    - {name: side, kernel: fill, agent: gpu0, args: [s], scalar: 7, by_tool: true}
`

// listedOut is s with every repeated dispatch listed out, one entry a
// repetition under its label: what repeat stands for. (Such a spec would
// not load, '#' being no letter of a name; it is built past the loader.)
func listedOut(s spec.Spec) spec.Spec {
	out := s
	out.Application.Dispatches = nil
	for _, d := range s.Application.Dispatches {
		if d.Repeat == 0 {
			out.Application.Dispatches = append(out.Application.Dispatches, d)
			continue
		}
		for k := range d.Repeat {
			one := d
			one.Name, one.Repeat = spec.RepetitionLabel(d.Name, k), 0
			out.Application.Dispatches = append(out.Application.Dispatches, one)
		}
	}
	return out
}

// TestRepeatIsItsDispatchesListed: a repeated dispatch's trace is, byte
// for byte, the trace of the same dispatches listed out with the same
// labels, and it keeps the rules.
func TestRepeatIsItsDispatchesListed(t *testing.T) {
	s := loadInline(t, repeated)
	got, err := simtarget.Sim{}.Run(context.Background(), s, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := simtarget.Sim{}.Run(context.Background(), listedOut(s), target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if vs := check.Judge(got).Violations; len(vs) > 0 {
		t.Fatalf("%d violations, first: %s", len(vs), vs[0].String())
	}
	labels := map[string]int{}
	for _, e := range got.Events {
		if e.Type == trace.AppDispatch {
			labels[e.Label]++
		}
	}
	for _, l := range []string{"first", "count#0", "count#3", "pair#0", "pair#2", "last"} {
		if labels[l] != 1 {
			t.Errorf("app_dispatch %s: %d times, want once (labels %v)", l, labels[l], labels)
		}
	}
	if len(labels) != 9 {
		t.Errorf("%d dispatches, want 9: %v", len(labels), labels)
	}
	g, w := string(trace.Marshal(got)), string(trace.Marshal(want))
	if g != w {
		gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("the repeated spec's trace differs from the listed one's at line %d:\nrepeated: %s\nlisted:   %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("the repeated spec's trace has %d lines, the listed one's %d", len(gl), len(wl))
	}
}

// TestRepeatUnderFreeThreads: repetitions on threads that truly run at
// once keep the rules (under -race, the tool's forgetting is checked for
// races too).
func TestRepeatUnderFreeThreads(t *testing.T) {
	s := loadInline(t, repeated)
	for i := range 3 {
		tr, err := simtarget.Sim{Parallel: true}.Run(context.Background(), s, target.Options{})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if vs := check.Judge(tr).Violations; len(vs) > 0 {
			t.Fatalf("run %d: %d violations, first: %s", i, len(vs), vs[0].String())
		}
		if n := count(tr, trace.AppComplete); n != 9 {
			t.Fatalf("run %d: %d completions, want 9", i, n)
		}
	}
}
