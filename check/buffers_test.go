package check

import (
	"strings"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// MEM-3 judges one run's result on what the application read back, and so
// only on a read-back that is the whole buffer with its own digest: a port
// reading two of four elements (with their digest) would otherwise be
// compared with the kernel's digest of all four, and one whose digest is
// not its values' could pass on the digest alone.
func TestMEM3ReadsWholeBuffers(t *testing.T) {
	fixed3 := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3}).trace()
	part := []trace.Run{{Value: 1, Count: 2}}
	cases := []struct {
		reason string
		tr     trace.Trace
		msg    string
	}{
		{"two of four elements read back", edit(fixed3, typ(trace.AppReadback), func(e *trace.Event) {
			e.Runs, e.Elements, e.Digest = part, 2, trace.DigestRuns(part)
		}), "read 2 elements of buffer buf-1, but the buffer has 4"},
		{"a digest that is not the values'", edit(fixed3, typ(trace.AppReadback), func(e *trace.Event) {
			e.Digest = trace.DigestRuns([]trace.Run{{Value: 2, Count: 4}})
		}), "but the values its runs spell digest to"},
	}
	if vs := Trace(fixed3); len(vs) > 0 {
		t.Fatalf("the untouched trace fails: %v", vs)
	}
	for _, c := range cases {
		vs := Trace(c.tr)
		if len(vs) != 1 || vs[0].Rule != "MEM-3" || !strings.Contains(vs[0].Message, c.msg) {
			t.Errorf("%s: got %v, want one MEM-3 violation saying %q", c.reason, vs, c.msg)
		}
	}
}
