// Package check holds the rule oracles: functions over a trace.Trace that
// judge what an implementation did, whichever implementation wrote the
// trace. It never imports the engine or the simulator.
package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/trace"
)

// Violation is one broken rule, with the events that show it.
type Violation struct {
	Rule     string        // rule ID, or "EXPECT" for a spec expectation
	Requires string        // what the rule requires
	Message  string        // what happened, concretely
	Events   []trace.Event // the few events that break it
	Dispatch uint64        // the SDK dispatch id, when about one
	Label    string        // the spec's dispatch or buffer name, when known
}

// maxEvents bounds the events a violation carries: enough to see the fault.
const maxEvents = 6

func (v Violation) Error() string { return v.String() }

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s\n  found: %s", v.Rule, v.Requires, v.Message)
	for i, e := range v.Events {
		if i == 0 {
			b.WriteString("\n  events: ")
		} else {
			b.WriteString("\n          ")
		}
		b.WriteString(FormatEvent(e))
	}
	return b.String()
}

// FormatEvent renders one event on one line, fields that are set only.
func FormatEvent(e trace.Event) string {
	parts := []string{"seq " + strconv.FormatUint(e.Seq, 10), string(e.Type)}
	add := func(s string) { parts = append(parts, s) }
	kv := func(k string, v uint64) {
		if v != 0 {
			add(k + "=" + strconv.FormatUint(v, 10))
		}
	}
	str := func(k, v string) {
		if v != "" {
			add(k + "=" + v)
		}
	}
	if e.Op != "" {
		add(string(e.Op))
	}
	if e.Phase != "" {
		add(string(e.Phase))
	}
	str("call", string(e.Call))
	str("service", string(e.Service))
	str("code", string(e.Code))
	str("label", e.Label)
	kv("dispatch", e.Dispatch)
	if p, ok := e.PassOf(); ok {
		add("pass=" + strconv.FormatUint(p, 10))
	}
	if e.Total != nil {
		add("total=" + strconv.FormatUint(*e.Total, 10))
	}
	if e.Result != nil {
		add("result=" + strconv.FormatInt(*e.Result, 10))
	}
	str("status", string(e.Status))
	if e.UserData != nil {
		add("user_data=" + strconv.FormatUint(*e.UserData, 10))
	}
	kv("thread", e.Thread)
	kv("context", e.Context)
	kv("agent", e.Agent)
	str("kernel", e.Kernel)
	if e.Corr != nil {
		add(fmt.Sprintf("corr=%d/%d/%d", e.Corr.Internal, e.Corr.External, e.Corr.Ancestor))
	}
	kv("signal", e.Signal)
	if e.Value != nil {
		add("value=" + strconv.FormatInt(*e.Value, 10))
	}
	if e.Start != 0 || e.End != 0 {
		add(fmt.Sprintf("time=%d..%d", e.Start, e.End))
	}
	if len(e.Counters) > 0 {
		names := make([]string, len(e.Counters))
		for i, c := range e.Counters {
			names[i] = c.Name
		}
		add("counters=" + strings.Join(names, ","))
	}
	if len(e.Payload) > 0 {
		add("payload=" + strings.Join(e.Payload, ","))
	}
	str("mem_in", e.MemIn)
	str("mem_out", e.MemOut)
	str("digest", e.Digest)
	if e.Message != "" {
		add(strconv.Quote(e.Message))
	}
	return strings.Join(parts, " ")
}

// violation builds a Violation for rule id from events of the trace.
func (x *index) violation(id string, d uint64, msg string, at ...int) Violation {
	v := Violation{Rule: id, Message: msg, Dispatch: d}
	if r, ok := rules.Lookup(id); ok {
		v.Requires = r.Text
	}
	if dv := x.dispatches[d]; dv != nil {
		v.Label = dv.label
	}
	at = slices.Clone(at) // callers pass the index's own lists
	slices.Sort(at)
	at = slices.Compact(at)
	for _, j := range at {
		if len(v.Events) == maxEvents {
			break
		}
		if j >= 0 && j < len(x.ev) {
			v.Events = append(v.Events, x.ev[j])
		}
	}
	return v
}

// sortViolations orders violations by where they show in the trace, then
// by rule, so reports are stable; exact duplicates are dropped.
func sortViolations(vs []Violation) []Violation {
	first := func(v Violation) uint64 {
		if len(v.Events) == 0 {
			return ^uint64(0)
		}
		return v.Events[0].Seq
	}
	slices.SortStableFunc(vs, func(a, b Violation) int {
		if fa, fb := first(a), first(b); fa != fb {
			if fa < fb {
				return -1
			}
			return 1
		}
		if a.Rule != b.Rule {
			if rules.Less(a.Rule, b.Rule) {
				return -1
			}
			return 1
		}
		if a.Dispatch != b.Dispatch {
			if a.Dispatch < b.Dispatch {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.CompactFunc(vs, func(a, b Violation) bool {
		return a.Rule == b.Rule && a.Message == b.Message && a.Dispatch == b.Dispatch && first(a) == first(b)
	})
}
