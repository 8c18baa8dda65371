package trace

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/replayspec/replayspec/golden"
)

// FuzzRead: Read never panics, and whatever it accepts writes back and
// reads again to the same trace (empty and absent lists being the same
// thing on the wire).
func FuzzRead(f *testing.F) {
	names := golden.Names()
	if testing.Short() {
		// make test (-short, -race): every fourth golden, a spread from
		// the smallest spec to the largest (reading and comparing a
		// long trace costs seconds under -race); all of them in make test-heavy and
		// make fuzz.
		names = everyNth(names, 4)
	}
	for _, name := range names {
		if b, err := golden.Read(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range readSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		t1, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, t1); err != nil {
			t.Fatalf("Write of a trace Read accepted: %v", err)
		}
		t2, err := Read(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("Read of what Write wrote: %v\n%s", err, out.Bytes())
		}
		if d := quickDiff(t1, t2, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("write and read again changed the trace (-first +second):\n%s", d)
		}
		// Written traces are canonical: writing again gives the same bytes.
		if again := Marshal(t2); !bytes.Equal(again, out.Bytes()) {
			t.Fatalf("Write is not canonical:\n%s\n%s", out.Bytes(), again)
		}
	})
}

// everyNth is xs[0], xs[n], xs[2n], ...: a spread of a seed corpus for
// -short.
func everyNth[T any](xs []T, n int) []T {
	var out []T
	for i := 0; i < len(xs); i += n {
		out = append(out, xs[i])
	}
	return out
}

// readSeeds are the hand-made traces FuzzRead starts from (besides the
// goldens): odd, broken and borderline lines. FuzzDecodeEvent starts from
// their lines too.
func readSeeds() []string {
	head := `{"trace":"` + Version + `","digest":"xxh3-64","spec":"s","target":"sim","sources":["tool","sdk"]}` + "\n"
	return []string{
		"",
		"\n\n",
		head,
		head + `{"seq":1,"type":"callback","op":"PASS","phase":"ENTER","pass":0,"total":3}`,
		head + `{"seq":1,"type":"callback","pass":-1}`,
		head + `{"seq":1,"type":""}`,
		head + `{"seq":1}`,
		head + `{"seq":1,"type":"kernel","bogus":1}`,
		head + `{"seq":1,"type":"kernel"} {"seq":2}`,
		head + `{"seq":1,"type":"record","counters":[{"name":"SQ_WAVES","value":18446744073709551615}]}`,
		head + `{"seq":1,"type":"app_memory","values":[1,-2,3],"payload":[]}`,
		head + `{"seq":1,"type":"warning","message":"\u00e9\ud800"}`,
		head + `{"seq":1e3,"type":"api"}`,
		head + `{"seq":1,"type":"api","corr":null,"pass":null}`,
		head + `[1,2,3]`,
		head + `{"seq":1,"type":"signal","value":-9223372036854775808}`,
		`{"trace":"replayspec.trace/v0"}`,
		`{"trace":"` + Version + `"`,
		"{\"trace\":\"" + Version + "\"}\r\n{\"seq\":1,\"type\":\"api\"}\r\n",
		"not json at all",
	}
}
