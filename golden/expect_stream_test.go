package golden

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// A spec's expectations judged as a stream, segment by segment, conclude
// what JudgeSpec concludes over the whole trace: every library trace,
// whole and at the black-box and runtime profiles (where some keys are not
// observable and the stream cuts elsewhere), cut at every chance. The
// broken traces are internal/faults' (TestStreamJudgesAsWhole).
func TestStreamJudgesExpectationsAsWhole(t *testing.T) {
	profiles := map[string][]trace.Source{
		"full":      nil,
		"black-box": {trace.SourceTool, trace.SourceApp},
		"runtime":   {trace.SourceTool, trace.SourceApp, trace.SourceRuntime},
	}
	var expecting, streamed, cut int
	for _, s := range library(t) {
		whole, err := trace.Read(bytes.NewReader(sharedTraceOf(t, s)))
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		s = spec.Defaults(s)
		ex := s.Expect
		ex.Violations = nil
		if cmp.Equal(ex, spec.Expect{}) {
			continue
		}
		for name, sources := range profiles {
			tr := whole
			if sources != nil {
				tr = whole.Only(sources)
			}
			expecting++
			j, exp, unseen, segments, ok := check.JudgeStreamSpec(s, tr, 0)
			if !ok {
				continue
			}
			streamed++
			if segments > 1 {
				cut++
			}
			wj, wexp, wunseen := check.JudgeSpec(s, tr)
			if d := cmp.Diff(wexp, exp); d != "" {
				t.Errorf("%s at %s: its expectations judged as a stream of %d segments differ from the whole trace's (-whole +stream):\n%s", s.Name, name, segments, d)
			}
			if d := cmp.Diff(wunseen, unseen); d != "" {
				t.Errorf("%s at %s: the keys not observable differ (-whole +stream):\n%s", s.Name, name, d)
			}
			if d := cmp.Diff(wj, j); d != "" {
				t.Errorf("%s at %s: the oracles' judgement differs (-whole +stream):\n%s", s.Name, name, d)
			}
		}
	}
	t.Logf("%d traces of specs with expectations: %d judged as a stream, %d of them in more than one segment", expecting, streamed, cut)
	if cut == 0 {
		t.Error("no trace with expectations was judged in more than one segment: the comparison compared nothing")
	}
}
