package check

import (
	"fmt"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkCMP judges completion as the application sees it.
func checkCMP(x *index) []Violation {
	// Run alone too (loop.go's selfEnding reads x.instances after it).
	defer x.countExamined()
	var vs []Violation
	signals := &signalIndex{decs: map[uint64][]int{}, shared: sharedSignals(x.apps)}
	for _, i := range x.types[ekSignal] {
		signals.decs[x.ev[i].Signal] = append(signals.decs[x.ev[i].Signal], i)
	}
	died := x.processDied()
	for _, a := range x.apps {
		d := x.dispatches[a.dispatch]
		if d != nil && x.cutOff(d) {
			continue // the process ended on a failed restore (MEM-5): no completion is owed
		}
		if x.openLoop(d) && !x.cut.ends {
			// A loop cut between passes (loop.go), judged as one the
			// pass budget will end (CMP-4): what it owes at its end is
			// judged in the part that holds the end.
			x.examined("CMP-4")
			continue
		}
		if died && len(a.complete) == 0 && len(a.timeout) == 0 {
			// In flight on another thread when the process ended: the
			// application never got to see it complete (decision 17.19).
			continue
		}
		if d != nil && len(d.neverEnded) > 0 {
			vs = append(vs, x.checkNeverCompletes(a, d, signals)...)
			continue
		}
		vs = append(vs, x.checkOneCompletion(a, d, signals)...)
	}
	return vs
}

// signalIndex holds signal decrements by signal id, and the application
// dispatches whose signal another in-flight dispatch also uses.
type signalIndex struct {
	decs   map[uint64][]int
	shared map[*appView]bool
}

// sharedSignals finds dispatches in flight together on one signal: their
// decrements cannot be told apart, so they are not counted.
func sharedSignals(apps []*appView) map[*appView]bool {
	shared := map[*appView]bool{}
	last := map[uint64]*appView{} // per signal, the open dispatch reaching furthest
	for _, a := range apps {      // apps are in trace order
		if prev := last[a.signal]; prev != nil && a.at < prev.end {
			shared[a], shared[prev] = true, true
		}
		if prev := last[a.signal]; prev == nil || a.end > prev.end {
			last[a.signal] = a
		}
	}
	return shared
}

// decrements lists the decrements of a's signal while a is in flight; ok
// is false when they cannot be attributed to a.
func (x *index) decrements(a *appView, signals *signalIndex, until int) (out []int, ok bool) {
	if a.signal == 0 || signals.shared[a] {
		return nil, false
	}
	list := signals.decs[a.signal]
	for j := sort.SearchInts(list, a.at); j < len(list) && list[j] < until; j++ {
		out = append(out, list[j])
	}
	return out, true
}

// CMP-1, CMP-2, CMP-3: one completion, one decrement after the loop, one
// readback.
func (x *index) checkOneCompletion(a *appView, d *dispatchView, signals *signalIndex) []Violation {
	var vs []Violation
	v := func(rule, msg string, at ...int) {
		w := x.violation(rule, a.dispatch, msg, at...)
		w.Label = a.label
		vs = append(vs, w)
	}
	x.examined("CMP-1")
	// A loop cut between passes, judged as one that will end by itself
	// (loop.go): what each pass shows is judged here, the completion in
	// the part that holds it. A decrement before then is early.
	open := x.openLoop(d)
	if decs, ok := x.decrements(a, signals, a.end); open && ok && len(decs) > 0 {
		v("CMP-2", fmt.Sprintf("%s's completion signal %d was decremented while its loop went on", a.label, a.signal), a.at, decs[0])
	}
	if len(a.timeout) > 0 && !open {
		v("CMP-1", fmt.Sprintf("%s never completed (the application timed out) though its loop was not reported as never ending", a.label), a.at, a.timeout[0])
	}
	if len(a.complete) != 1 && len(a.timeout) == 0 && !open {
		v("CMP-1", fmt.Sprintf("the application saw %d completions of %s, want 1", len(a.complete), a.label), append([]int{a.at}, a.complete...)...)
	}
	// CMP-1 as the application sees it: its completion signal starts at 1,
	// and after its wait it reads 0: decremented once. A completion written
	// after every pass leaves it below 0 (docs/trace.md, app_signal).
	for _, i := range a.signals {
		if v := x.ev[i].Value; v != nil && !signals.shared[a] {
			if *v != 0 {
				v := x.violation("CMP-1", a.dispatch, fmt.Sprintf("%s's completion signal %d read %d after the application's wait: it started at 1, so it was decremented %d times, want once", a.label, a.signal, *v, 1-*v), a.at, i)
				v.Label = a.label
				vs = append(vs, v)
			}
			break
		}
	}
	if x.has(trace.Signal) && !open {
		if decs, ok := x.decrements(a, signals, a.end); ok {
			if len(decs) != 1 {
				v("CMP-1", fmt.Sprintf("%s's completion signal %d was decremented %d times, want once", a.label, a.signal, len(decs)), append([]int{a.at}, decs...)...)
			}
			if len(decs) > 0 && d != nil {
				vs = append(vs, x.checkCompletionAfterLoop(a, d, decs[0])...)
			}
		}
	}
	if d != nil && !signals.shared[a] {
		// CMP-2 as the tool sees it: the application's completion signal,
		// loaded from inside the loop's EXIT callbacks, still reads 1 (its
		// start): the completion is held back until after CONFIG EXIT.
		for _, i := range d.loads {
			e := &x.ev[i]
			if e.Value == nil || x.byTool[i] || e.Signal != a.signal {
				continue
			}
			x.examined("CMP-2")
			if *e.Value != 1 {
				v("CMP-2", fmt.Sprintf("%s's completion signal %d read %d in %s of dispatch %d, as the tool loaded it: the completion fired before the loop ended", a.label, a.signal, *e.Value, string(e.Op)+" "+string(e.Phase)+passSuffix(e), d.id), a.at, i)
				break
			}
		}
	}
	if d != nil && d.replayed() && x.has(trace.Kernel) {
		x.examined("CMP-2")
		for _, k := range d.kernels {
			if w := x.window(k); w.open && x.ev[k].Signal == a.signal && a.signal != 0 {
				v("CMP-2", fmt.Sprintf("the kernel of pass %d carried the application's completion signal %d", w.pass, a.signal), w.enter, k)
				break
			}
		}
	}
	if x.has(trace.AppReadback) && len(a.timeout) == 0 && !open {
		x.examined("CMP-3")
		perBuffer := map[string][]int{}
		var order []string
		for _, i := range a.readback {
			b := x.ev[i].Buffer
			if perBuffer[b] == nil {
				order = append(order, b)
			}
			perBuffer[b] = append(perBuffer[b], i)
		}
		for _, b := range order {
			if rs := perBuffer[b]; len(rs) != 1 {
				v("CMP-3", fmt.Sprintf("the application read buffer %s of %s back %d times after one completion, want once", b, a.label, len(rs)), append([]int{a.at}, rs...)...)
			}
		}
		if len(a.readback) > 0 && len(a.complete) > 0 && a.readback[0] < a.complete[0] {
			v("CMP-3", fmt.Sprintf("%s was read back before it completed", a.label), a.readback[0], a.complete[0])
		}
	}
	return vs
}

// CMP-2: the decrement follows CONFIG EXIT and the last PASS EXIT.
func (x *index) checkCompletionAfterLoop(a *appView, d *dispatchView, dec int) []Violation {
	var vs []Violation
	after := x.concat(d.configExit, d.passExit)
	for _, i := range after {
		if dec < i {
			w := x.violation("CMP-2", d.id, fmt.Sprintf("%s's completion fired before the loop ended (before %s of dispatch %d)", a.label, kindText(&x.ev[i])+passSuffix(&x.ev[i]), d.id), dec, i)
			w.Label = a.label
			return append(vs, w)
		}
	}
	return vs
}

func passSuffix(e *trace.Event) string {
	if e.Op == trace.OpPass {
		return " of pass " + passText(e)
	}
	return ""
}

// CMP-4: a loop the harness had to cut off never completes, and only an
// indefinite loop may be cut off.
func (x *index) checkNeverCompletes(a *appView, d *dispatchView, signals *signalIndex) []Violation {
	var vs []Violation
	v := func(msg string, at ...int) {
		w := x.violation("CMP-4", d.id, msg, at...)
		w.Label = a.label
		vs = append(vs, w)
	}
	x.examined("CMP-4")
	ne := d.neverEnded[0]
	if r, ok := x.passCount(d); ok && r != 0 {
		v(fmt.Sprintf("dispatch %d was reported never ending, but replay_pass_count returned %d (a bounded loop)", d.id, r), d.passCounts[0], ne)
	}
	if len(a.complete) > 0 {
		v(fmt.Sprintf("%s never ended, yet the application saw it complete", a.label), ne, a.complete[0])
	}
	if len(a.timeout) == 0 {
		v(fmt.Sprintf("%s never ended, yet the application did not report a timeout", a.label), ne)
	}
	// The SDK's account of the cut-off loop (never_ended.pass: the passes
	// it ran) must be what the tool saw: one PASS ENTER per pass.
	if e := &x.ev[ne]; e.Type == trace.NeverEnded && e.Pass != nil && len(d.passEnter) > 0 && *e.Pass != uint64(x.passesRun(d)) {
		v(fmt.Sprintf("dispatch %d was reported never ending after %d passes, but the tool saw %d", d.id, *e.Pass, x.passesRun(d)), ne, d.passEnter[len(d.passEnter)-1])
	}
	if decs, ok := x.decrements(a, signals, a.end); ok && len(decs) > 0 {
		v(fmt.Sprintf("%s never ended, yet its completion signal %d was decremented", a.label, a.signal), ne, decs[0])
	}
	// As the application sees it: the signal it gave up on still reads 1.
	for _, i := range a.signals {
		if val := x.ev[i].Value; val != nil && !signals.shared[a] && *val != 1 {
			v(fmt.Sprintf("%s never ended, yet its completion signal %d read %d when the application gave up waiting (it started at 1)", a.label, a.signal, *val), ne, i)
			break
		}
	}
	return vs
}
