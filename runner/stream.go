package runner

import (
	"fmt"
	"reflect"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Tally is what a report says of a trace that was judged as a stream and
// not kept: its size, its passes and the loops the harness cut off.
type Tally struct {
	Events  int
	Passes  int
	Stopped []Stopped
}

// TallyStream counts a trace's events as they arrive. The labels it keeps
// to name a cut-off loop are those of recent dispatches only (a never_ended
// event follows its loop's own events), so its memory stays flat.
type TallyStream struct {
	t      Tally
	labels map[uint64]string
}

// recentLabels bounds the dispatch labels TallyStream keeps.
const recentLabels = 4096

// Add counts e.
func (c *TallyStream) Add(e *trace.Event) {
	c.t.Events++
	switch {
	case e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter:
		c.t.Passes++
	case e.Type == trace.NeverEnded:
		st := Stopped{Dispatch: e.Dispatch, Label: c.labels[e.Dispatch]}
		st.Known = st.Label != ""
		if !st.Known {
			st.Label = fmt.Sprintf("dispatch %d", e.Dispatch)
		}
		st.Passes, _ = e.PassOf()
		c.t.Stopped = append(c.t.Stopped, st)
	}
	if e.Dispatch != 0 && e.Label != "" {
		if c.labels == nil || len(c.labels) >= recentLabels {
			c.labels = make(map[uint64]string, 64)
		}
		if c.labels[e.Dispatch] == "" {
			c.labels[e.Dispatch] = e.Label
		}
	}
}

// Tally is what was counted.
func (c *TallyStream) Tally() *Tally { t := c.t; return &t }

// Streamable reports whether a trace of s can be judged as a stream: the
// oracles can (check.Stream), but a spec's expectations look the whole
// trace up, so a spec with any (whatever field of expect: is set) is
// judged whole.
func Streamable(s spec.Spec) bool { return reflect.ValueOf(s.Expect).IsZero() }

// JudgeStreamed fills r's verdicts from j, the oracles' judgement of a
// trace judged as a stream (check.Stream) for spec s, which has no
// expectations (Streamable); tally says what the trace held.
func JudgeStreamed(r *Result, s spec.Spec, j check.Judgement, tally *Tally) {
	r.Tally = tally
	r.Violations, r.Expected, r.Unseen = sortOut(j.Violations, nil)
	r.Rules = j.Rules
	r.Unexercised = unexercised(s.Rules, j)
	r.NothingJudged = j.Count()[check.Pass]+j.Count()[check.Fail] == 0
}
