package check

import (
	"bytes"
	"testing"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// FuzzCheck: whatever a port writes, reading and checking it never panics.
func FuzzCheck(f *testing.F) {
	for _, tr := range validTraces() {
		f.Add(trace.Marshal(tr))
	}
	f.Add(trace.Marshal(bumpIDPerPass(validTraces()["fixed 3"])))
	f.Add([]byte(`{"trace":"replayspec.trace/v1"}` + "\n" + `{"seq":1,"type":"callback","op":"PASS","phase":"EXIT","pass":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, v := range Trace(tr) {
			_ = v.String()
		}
		_ = Expectations(spec.Spec{Expect: spec.Expect{Timestamps: "differ_per_pass", NoWarnings: true,
			Passes: map[string]spec.Count{"k": spec.Exactly(1)}, NeverEnds: []string{"k"}}}, tr)
	})
}
