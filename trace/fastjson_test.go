package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/replayspec/replayspec/internal/corpus"
)

// corpusLines is every event line this repository holds: the goldens, the
// recorded traces of check/testdata (the C port's among them) and the lines
// of FuzzRead's seeds. Header lines are left out.
func corpusLines(t testing.TB) [][]byte {
	t.Helper()
	files, err := corpus.Files("..")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	keep := func(r io.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, maxLine)
		for sc.Scan() {
			if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 && !bytes.HasPrefix(b, []byte(`{"trace":`)) {
				lines = append(lines, bytes.Clone(b))
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range files {
		b, err := corpus.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		keep(bytes.NewReader(b))
	}
	for _, s := range readSeeds() {
		keep(strings.NewReader(s))
	}
	return lines
}

// diffDecode decodes line with decode and with DecodeStrict and says how
// they differ: "" when both give the same event, or both the same error.
func diffDecode(decode func([]byte, *Event) error, line []byte) string {
	var got, want Event
	gotErr, wantErr := decode(line, &got), DecodeStrict(line, &want)
	switch {
	case (gotErr == nil) != (wantErr == nil):
		return "errors differ: got " + errString(gotErr) + ", want " + errString(wantErr)
	case wantErr != nil:
		if gotErr.Error() != wantErr.Error() {
			return "error messages differ: got " + gotErr.Error() + ", want " + wantErr.Error()
		}
		return ""
	}
	// No cmpopts.EquateEmpty: an empty list and an absent one differ.
	return quickDiff(want, got)
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return "error " + err.Error()
}

// decodeMismatches runs diffDecode over lines and returns the first few
// differences.
func decodeMismatches(decode func([]byte, *Event) error, lines [][]byte) []string {
	var out []string
	for _, line := range lines {
		if d := diffDecode(decode, line); d != "" {
			out = append(out, string(line)+"\n"+d)
			if len(out) == 5 {
				break
			}
		}
	}
	return out
}

// TestFastDecodeMatchesStrict: on every event line of the corpus, the fast
// decoder gives the event DecodeStrict gives, or the same error. And it is
// the fast path that gives it: every line without an escape is decoded by
// the scanner, not handed back to encoding/json.
func TestFastDecodeMatchesStrict(t *testing.T) {
	lines := corpusLines(t)
	if testing.Short() {
		lines = everyNth(lines, 4) // make test: a spread; all in make test-heavy
	}
	var d eventDecoder // one decoder for all, as ReadEach uses one for a trace
	for _, m := range decodeMismatches(d.decode, lines) {
		t.Error(m)
	}
	fast := 0
	for _, line := range lines {
		var e Event
		ok := d.fast(line, &e)
		if ok {
			fast++
		}
		plain := !bytes.Contains(line, []byte(`\`)) && !bytes.Contains(line, []byte("null"))
		if !ok && plain && DecodeStrict(line, new(Event)) == nil {
			t.Errorf("fast path gave up on a plain line encoding/json accepts:\n%s", line)
		}
	}
	t.Logf("%d of %d lines decoded by the fast path", fast, len(lines))
}

// TestDecodeDiffCatchesPlantedBugs is the test of the differential test:
// decoders each broken in one way are caught on the corpus and the fuzz
// seeds.
func TestDecodeDiffCatchesPlantedBugs(t *testing.T) {
	var lines [][]byte
	for _, s := range decodeSeeds {
		lines = append(lines, []byte(s))
	}
	lines = append(lines, corpusLines(t)...)
	var d eventDecoder
	listOf := map[int][]string{}
	var lastCorr *Corr
	for name, broken := range map[string]func([]byte, *Event) error{
		"drops the label": func(b []byte, e *Event) error {
			err := d.decode(b, e)
			e.Label = ""
			return err
		},
		"counts passes from 1": func(b []byte, e *Event) error {
			err := d.decode(b, e)
			if e.Pass != nil {
				e.Pass = U64(*e.Pass + 1)
			}
			return err
		},
		"gives nil for an empty list": func(b []byte, e *Event) error {
			err := d.decode(b, e)
			if e.Payload != nil && len(e.Payload) == 0 {
				e.Payload = nil
			}
			return err
		},
		// What a decoder that keeps its last lists and objects (recent)
		// would give were it to match them too loosely.
		"gives a payload list of the same length again": func(b []byte, e *Event) error {
			err := d.decode(b, e)
			if n := len(e.Payload); n > 0 && listOf[n] != nil {
				e.Payload = listOf[n]
			} else if n > 0 {
				listOf[n] = e.Payload
			}
			return err
		},
		"gives the last correlation ids of the same internal id again": func(b []byte, e *Event) error {
			err := d.decode(b, e)
			if e.Corr != nil && lastCorr != nil && e.Corr.Internal == lastCorr.Internal {
				e.Corr = lastCorr
			}
			if e.Corr != nil {
				lastCorr = e.Corr
			}
			return err
		},
		"drops the last counter": func(b []byte, e *Event) error {
			err := d.decode(b, e)
			if n := len(e.Counters); n > 0 {
				e.Counters = e.Counters[:n-1]
			}
			return err
		},
		"accepts an unknown key": func(b []byte, e *Event) error {
			*e = Event{}
			if d.fast(b, e) {
				return nil
			}
			*e = Event{}
			if err := DecodeStrict(b, e); err != nil && strings.Contains(err.Error(), "unknown field") {
				return nil
			}
			return DecodeStrict(b, e)
		},
		"words an error its own way": func(b []byte, e *Event) error {
			if err := d.decode(b, e); err != nil {
				return io.ErrUnexpectedEOF
			}
			return nil
		},
	} {
		if !slices.ContainsFunc(lines, func(l []byte) bool { return diffDecode(broken, l) != "" }) {
			t.Errorf("a decoder that %s passes the differential test", name)
		}
	}
}

// decodeSeeds are lines at the edges of what the fast path takes: each
// must end as DecodeStrict ends it.
var decodeSeeds = []string{
	`{"seq":1,"type":"api"}`,
	` {"seq":1 , "type" : "api" } `,
	"\t{\"seq\":1,\r\n\"type\":\"api\"}\n",
	`{"Seq":1,"type":"api"}`,
	`{"seq":1,"TYPE":"api"}`,
	`{"seq":1,"type":"api","ſeq":2}`,
	`{"seq":1,"seq":2,"type":"api"}`,
	`{"seq":1,"type":"api","pass":1,"pass":2}`,
	`{"seq":1,"type":"api","corr":{"internal":1,"internal":2,"external":0,"ancestor":0}}`,
	`{"seq":1,"type":"api","corr":{"internal":1,"Internal":2}}`,
	`{"seq":1,"type":"api","corr":{"internal":1,"extra":2}}`,
	`{"seq":1,"type":"api","corr":{}}`,
	`{"seq":1,"type":"api","corr":null}`,
	`{"seq":null,"type":"api"}`,
	`{"seq":1,"type":null}`,
	`{"seq":1,"type":"api","payload":null}`,
	`{"seq":1,"type":"api","payload":[]}`,
	`{"seq":1,"type":"api","payload":[null]}`,
	`{"seq":1,"type":"api","payload":["a","b"],"args":[],"operations":[],"regions":[],"runs":[],"counters":[],"groups":[]}`,
	`{"seq":1,"type":"api","groups":[[],["a"],null]}`,
	`{"seq":1,"type":"api","operations":["PASS","CONFIG"]}`,
	`{"seq":-0,"type":"api"}`,
	`{"seq":-1,"type":"api"}`,
	`{"seq":01,"type":"api"}`,
	`{"seq":1.0,"type":"api"}`,
	`{"seq":1e3,"type":"api"}`,
	`{"seq":1E3,"type":"api"}`,
	`{"seq":18446744073709551615,"type":"api"}`,
	`{"seq":18446744073709551616,"type":"api"}`,
	`{"seq":99999999999999999999,"type":"api"}`,
	`{"seq":1,"type":"api","value":-9223372036854775808}`,
	`{"seq":1,"type":"api","value":-9223372036854775809}`,
	`{"seq":1,"type":"api","value":9223372036854775807}`,
	`{"seq":1,"type":"api","value":9223372036854775808}`,
	`{"seq":1,"type":"api","value":-0}`,
	`{"seq":1,"type":"api","value":- 1}`,
	`{"seq":1,"type":"api","value":-}`,
	`{"seq":1,"type":"api","result":-1,"packets":-2,"kernel_packets":3}`,
	`{"seq":1,"type":"api","packets":9223372036854775808}`,
	`{"seq":1,"type":"api","grid":[1,2,3],"workgroup":[4,5,6]}`,
	`{"seq":1,"type":"api","grid":[1,2]}`,
	`{"seq":1,"type":"api","grid":[1,2,3,4]}`,
	`{"seq":1,"type":"api","grid":[]}`,
	`{"seq":1,"type":"api","grid":[4294967295,0,0]}`,
	`{"seq":1,"type":"api","grid":[4294967296,0,0]}`,
	`{"seq":1,"type":"api","info":{"size":1,"kernel_id":2,"private_segment_size":3,"group_segment_size":4,"workgroup":[1,1,1],"grid":[2,2,2]}}`,
	`{"seq":1,"type":"api","info":{"size":1,"bogus":2}}`,
	`{"seq":1,"type":"api","graph":true}`,
	`{"seq":1,"type":"api","graph":false}`,
	`{"seq":1,"type":"api","graph":tru}`,
	`{"seq":1,"type":"api","graph":1}`,
	`{"seq":1,"type":"api","kernel":5}`,
	`{"seq":"1","type":"api"}`,
	`{"seq":1,"type":"api","message":"a\"b"}`,
	`{"seq":1,"type":"api","message":"tab\there"}`,
	"{\"seq\":1,\"type\":\"api\",\"message\":\"raw\ttab\"}",
	`{"seq":1,"type":"api","message":"é ü \u2028"}`,
	"{\"seq\":1,\"type\":\"api\",\"message\":\"\xff\"}",
	"{\"seq\":1,\"type\":\"api\",\"message\":\"\xe2\x80\xa8\"}",
	`{"seq":1,"type":"api","label":""}`,
	`{"seq":1,"type":"api"}}`,
	`{"seq":1,"type":"api"}]`,
	`{"seq":1,"type":"api"} {}`,
	`{"seq":1,"type":"api"},`,
	`{"seq":1,"type":"api",}`,
	`{"seq":1,"type":"api"`,
	`{"seq":1 "type":"api"}`,
	`{}`,
	`[]`,
	`null`,
	`"x"`,
	``,
	`{"end":3}`,
	`{"seq":1,"type":"record","counters":[{"name":"SQ_WAVES","value":7},{"value":1,"name":"X"}]}`,
	`{"seq":1,"type":"record","counters":[{"name":"SQ_WAVES","name":"Y"}]}`,
	`{"seq":1,"type":"mem_read","regions":[{"addr":1,"bytes":2}],"runs":[{"value":-3,"count":4}]}`,
	`{"seq":1,"type":"mem_read","regions":[{"addr":1,"bytes":2,"x":1}]}`,
	// Keys the prediction may guess, spelt one byte off near the end of
	// the line, where it compares byte by byte, and keys that begin as
	// others do.
	`{"type":"api","seq"x1}`,
	`{"type":"api","seq"1}`,
	`{"type":"api","seq":1,"end"x1}`,
	`{"seq":1,"type":"api","kernel_packets":1,"kernel":"k","payload_size":2,"payload":[],"op_id":3,"op":"PASS"}`,
	`{"seq":1,"type":"api","kernel_packetsx:1}`,
	// Duplicates that encoding/json merges into what the first allocated.
	`{"seq":1,"type":"api","corr":{"internal":1,"external":2,"ancestor":3},"corr":{"internal":5}}`,
	`{"seq":1,"type":"api","info":{"size":1,"kernel_id":2,"private_segment_size":3,"group_segment_size":4,"workgroup":[1,1,1],"grid":[2,2,2]},"info":{"size":7}}`,
}

// FuzzDecodeEvent: on any line, the fast decoder ends as DecodeStrict
// ends: the same event, or the same error.
func FuzzDecodeEvent(f *testing.F) {
	// A spread of the corpus (TestFastDecodeMatchesStrict takes it all).
	for _, line := range everyNth(corpusLines(f), 16) {
		f.Add(line)
	}
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	var shared eventDecoder // one that has seen every input: its kept names must not leak into an event
	f.Fuzz(func(t *testing.T, line []byte) {
		var fresh eventDecoder
		for _, d := range []*eventDecoder{&fresh, &shared} {
			if diff := diffDecode(d.decode, line); diff != "" {
				t.Fatalf("%q:\n%s", line, diff)
			}
		}
	})
}

// TestDecoderManyNames: names beyond what the decoder keeps, landing on
// each other's slots, still decode to themselves.
func TestDecoderManyNames(t *testing.T) {
	var d eventDecoder
	for i := range 4 * nameSlots {
		line := []byte(`{"seq":1,"type":"api","label":"d` + itoa(i) + `","kernel":"k` + itoa(i%7) + `"}`)
		if diff := diffDecode(d.decode, line); diff != "" {
			t.Fatal(diff)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// jsonLine is the event as encoding/json writes it (the writer's way
// before appendEvent), without the newline.
func jsonLine(e *Event) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// encodeMismatch says how encode's bytes for e differ from encoding/json's.
func encodeMismatch(encode func([]byte, *Event) []byte, e *Event) string {
	got, want := encode(nil, e), jsonLine(e)
	if bytes.Equal(got, want) {
		return ""
	}
	return "got  " + string(got) + "\nwant " + string(want)
}

// TestAppendEventMatchesJSON: every event of the corpus is written byte
// for byte as encoding/json writes it.
func TestAppendEventMatchesJSON(t *testing.T) {
	lines, want := corpusLines(t), 10000
	if testing.Short() {
		lines, want = everyNth(lines, 4), want/4 // make test: a spread
	}
	n := 0
	for _, line := range lines {
		var e Event
		if DecodeStrict(line, &e) != nil {
			continue
		}
		n++
		if m := encodeMismatch(appendEvent, &e); m != "" {
			t.Fatal(m)
		}
	}
	if n < want {
		t.Errorf("only %d events in the corpus", n)
	}
}

// genEvent draws an event with any field set or not, any string (invalid
// UTF-8, control bytes and U+2028 included), lists nil, empty or not, and
// nil groups inside a list.
func genEvent(rt *rapid.T) *Event {
	str := rapid.OneOf(
		rapid.Just(""),
		rapid.SampledFrom([]string{"PASS", "x", "a\"b\\c", "\b\f\n\r\t\x00\x1f\x7f", "é\u2028\u2029\U0001F600", "\xff\xfe", "\xe2\x80", "<&>"}),
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	)
	u64 := rapid.OneOf(rapid.Just(uint64(0)), rapid.Uint64())
	i64 := rapid.Int64()
	optU := func(label string) *uint64 {
		if rapid.Bool().Draw(rt, label+"?") {
			return U64(u64.Draw(rt, label))
		}
		return nil
	}
	optI := func(label string) *int64 {
		if rapid.Bool().Draw(rt, label+"?") {
			return I64(i64.Draw(rt, label))
		}
		return nil
	}
	strs := func(label string) []string {
		switch rapid.IntRange(0, 2).Draw(rt, label+"?") {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		return rapid.SliceOfN(str, 1, 4).Draw(rt, label)
	}
	dim := func(label string) Dim3 {
		return Dim3{rapid.Uint32().Draw(rt, label+"x"), rapid.Uint32().Draw(rt, label+"y"), rapid.Uint32().Draw(rt, label+"z")}
	}
	e := &Event{
		Seq: u64.Draw(rt, "seq"), Type: Type(str.Draw(rt, "type")), Time: u64.Draw(rt, "time"), Thread: u64.Draw(rt, "thread"),
		Agent: u64.Draw(rt, "agent"), Queue: u64.Draw(rt, "queue"), Dispatch: u64.Draw(rt, "dispatch"),
		Kernel: str.Draw(rt, "kernel"), Family: Family(str.Draw(rt, "family")), Product: str.Draw(rt, "product"), Arch: str.Draw(rt, "arch"),
		Context: u64.Draw(rt, "context"), Label: str.Draw(rt, "label"), Buffer: str.Draw(rt, "buffer"),
		Op: Op(str.Draw(rt, "op")), Phase: Phase(str.Draw(rt, "phase")), Pass: optU("pass"), Total: optU("total"),
		UserData: optU("user_data"), Call: Call(str.Draw(rt, "call")), Result: optI("result"), Status: Status(str.Draw(rt, "status")),
		Payload: strs("payload"), PayloadSize: optU("payload_size"), Domain: Domain(str.Draw(rt, "domain")),
		OpName: Op(str.Draw(rt, "op_name")), OpID: optU("op_id"), Service: Service(str.Draw(rt, "service")),
		Start: u64.Draw(rt, "start"), End: u64.Draw(rt, "end"), Signal: u64.Draw(rt, "signal"), Value: optI("value"),
		Packets: rapid.Int().Draw(rt, "packets"), KernelPackets: rapid.Int().Draw(rt, "kernel_packets"), Graph: rapid.Bool().Draw(rt, "graph"),
		Args: strs("args"), Addr: u64.Draw(rt, "addr"), Bytes: u64.Draw(rt, "bytes"), MemKind: MemKind(str.Draw(rt, "mem_kind")),
		MemIn: str.Draw(rt, "mem_in"), MemOut: str.Draw(rt, "mem_out"), Digest: str.Draw(rt, "digest"), Elements: u64.Draw(rt, "elements"),
		Code: WarningCode(str.Draw(rt, "code")), Message: str.Draw(rt, "message"),
	}
	if rapid.Bool().Draw(rt, "corr?") {
		e.Corr = &Corr{u64.Draw(rt, "internal"), u64.Draw(rt, "external"), u64.Draw(rt, "ancestor")}
	}
	if rapid.Bool().Draw(rt, "info?") {
		e.Info = &DispatchInfo{u64.Draw(rt, "size"), u64.Draw(rt, "kernel_id"), rapid.Uint32().Draw(rt, "private"), rapid.Uint32().Draw(rt, "group"), dim("wg"), dim("grid")}
	}
	if rapid.Bool().Draw(rt, "grid?") {
		d := dim("grid")
		e.Grid = &d
	}
	if rapid.Bool().Draw(rt, "workgroup?") {
		d := dim("workgroup")
		e.Workgroup = &d
	}
	if ops := strs("operations"); ops != nil {
		e.Operations = []Op{}
		for _, op := range ops {
			e.Operations = append(e.Operations, Op(op))
		}
	}
	if rapid.Bool().Draw(rt, "groups?") {
		e.Groups = [][]string{}
		for range rapid.IntRange(0, 3).Draw(rt, "groups") {
			e.Groups = append(e.Groups, strs("group"))
		}
	}
	for range rapid.IntRange(0, 3).Draw(rt, "counters") {
		e.Counters = append(e.Counters, Counter{str.Draw(rt, "counter"), u64.Draw(rt, "counter value")})
	}
	for range rapid.IntRange(0, 3).Draw(rt, "regions") {
		e.Regions = append(e.Regions, Region{u64.Draw(rt, "region addr"), u64.Draw(rt, "region bytes")})
	}
	for range rapid.IntRange(0, 3).Draw(rt, "runs") {
		e.Runs = append(e.Runs, Run{i64.Draw(rt, "run value"), u64.Draw(rt, "run count")})
	}
	return e
}

// checkAppendEvent is the property: appendEvent writes what encoding/json
// writes, and the fast decoder reads it back as DecodeStrict does.
func checkAppendEvent(rt *rapid.T) {
	e := genEvent(rt)
	if m := encodeMismatch(appendEvent, e); m != "" {
		rt.Fatal(m)
	}
	var d eventDecoder
	if diff := diffDecode(d.decode, appendEvent(nil, e)); diff != "" {
		rt.Fatal(diff)
	}
}

func TestAppendEventProperty(t *testing.T) { rapid.Check(t, checkAppendEvent) }

// FuzzAppendEvent is the property under go's fuzzer (make fuzz).
func FuzzAppendEvent(f *testing.F) { f.Fuzz(rapid.MakeFuzz(checkAppendEvent)) }

// TestEncodeDiffCatchesPlantedBugs is the test of the encoder's
// differential tests: encoders each broken in one way are caught, on the
// corpus or by the property.
func TestEncodeDiffCatchesPlantedBugs(t *testing.T) {
	var corpus []*Event
	for _, line := range everyNth(corpusLines(t), 4) {
		var e Event
		if DecodeStrict(line, &e) == nil {
			corpus = append(corpus, &e)
		}
	}
	for name, broken := range map[string]func([]byte, *Event) []byte{
		"drops the label": func(b []byte, e *Event) []byte {
			c := *e
			c.Label = ""
			return appendEvent(b, &c)
		},
		"writes an empty list": func(b []byte, e *Event) []byte {
			b = appendEvent(b, e)
			if e.Payload == nil {
				b = append(b[:len(b)-1], `,"payload":[]}`...)
			}
			return b
		},
		"escapes < as HTML": func(b []byte, e *Event) []byte {
			return bytes.ReplaceAll(appendEvent(b, e), []byte("<"), []byte(`\u003c`))
		},
		"writes invalid UTF-8 as it is": func(b []byte, e *Event) []byte {
			c := *e
			c.Message = strings.ToValidUTF8(c.Message, "\uFFFD")
			return appendEvent(b, &c)
		},
	} {
		caught := false
		for _, e := range corpus {
			if encodeMismatch(broken, e) != "" {
				caught = true
				break
			}
		}
		if !caught {
			// Not in the corpus: the property must find it.
			caught = rapidFails(t, func(rt *rapid.T) {
				if m := encodeMismatch(broken, genEvent(rt)); m != "" {
					rt.Fatal(m)
				}
			})
		}
		if !caught {
			t.Errorf("an encoder that %s passes the differential tests", name)
		}
	}
}

// rapidFails reports whether rapid finds a case where prop fails, without
// failing t.
func rapidFails(t *testing.T, prop func(*rapid.T)) bool {
	q := &quietTB{TB: t}
	rapid.Check(q, prop)
	return q.failed
}

// quietTB is t that keeps rapid's failures and logs to itself.
type quietTB struct {
	rapid.TB
	failed bool
}

func (q *quietTB) Logf(string, ...any)   {}
func (q *quietTB) Log(...any)            {}
func (q *quietTB) Errorf(string, ...any) { q.failed = true }
func (q *quietTB) Error(...any)          { q.failed = true }
func (q *quietTB) Fatalf(string, ...any) { q.failed = true }
func (q *quietTB) Fatal(...any)          { q.failed = true }
func (q *quietTB) FailNow()              { q.failed = true }
func (q *quietTB) Fail()                 { q.failed = true }
func (q *quietTB) Failed() bool          { return q.failed }

// TestDigitsMatchesParseUint: digits, which reads eight bytes at a time,
// takes exactly the numbers strconv.ParseUint takes under JSON's rules (no
// leading zero, no sign), stops where they end, and fails on the others:
// every length to 21 digits, with and without a leading zero, before each
// kind of byte that can end one, with room after it and without.
func TestDigitsMatchesParseUint(t *testing.T) {
	for _, msg := range digitsMismatches(func(s *scanner) uint64 { return s.digits(math.MaxUint64) }) {
		t.Error(msg)
	}
}

// digitsMismatches says where read, given a scanner at a number, ends
// otherwise than ParseUint says it should.
func digitsMismatches(read func(*scanner) uint64) []string {
	var out []string
	nums := []string{"", "0", "00", "01", "18446744073709551615", "18446744073709551616", "99999999999999999999", "4294967296"}
	for n := 1; n <= 21; n++ {
		nums = append(nums, "1234567890123456789012"[:n], "9876543210987654321098"[n%10:][:0]+strings.Repeat("9", n), "0"+strings.Repeat("7", n-1))
	}
	for _, num := range nums {
		for _, end := range []string{"", ",", "}", ".5", "e3", "x", " ", "]", "/", ":"} {
			for _, pad := range []string{"", `,"padding":12345678}`} {
				line := []byte(num + end + pad)
				s := scanner{b: line, ok: true}
				got := read(&s)
				want, err := strconv.ParseUint(num, 10, 64)
				wantOK := num != "" && err == nil && (num == "0" || num[0] != '0')
				if s.ok != wantOK || (wantOK && (got != want || s.i != len(num))) {
					out = append(out, fmt.Sprintf("%q: got %d, ok %v, at %d; want %d, ok %v, at %d", line, got, s.ok, s.i, want, wantOK, len(num)))
				}
			}
		}
	}
	return out
}

// TestDigitsDiffCatchesPlantedBugs: readers of numbers each broken in one
// way fail TestDigitsMatchesParseUint's comparison.
func TestDigitsDiffCatchesPlantedBugs(t *testing.T) {
	for name, broken := range map[string]func(*scanner) uint64{
		"takes a leading zero": func(s *scanner) uint64 {
			if s.i < len(s.b) && s.b[s.i] == '0' {
				s.i++
			}
			return s.digits(math.MaxUint64)
		},
		"drops the ninth digit": func(s *scanner) uint64 {
			v := s.digits(math.MaxUint64)
			if s.i >= 9 {
				v -= uint64(s.b[8]-'0') * pow10(s.i-9)
			}
			return v
		},
		"stops after eight digits": func(s *scanner) uint64 {
			b := s.b
			s.b = s.b[:min(len(b), s.i+8)]
			v := s.digits(math.MaxUint64)
			s.b = b
			return v
		},
	} {
		if len(digitsMismatches(broken)) == 0 {
			t.Errorf("a reader of numbers that %s passes", name)
		}
	}
}

func pow10(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}

// TestDecodeKeysInAnyOrder: the lines of the corpus with their keys in
// other orders, some keys twice, and whitespace between, decode as
// DecodeStrict decodes them, through one decoder that has learnt the
// writer's order (its predictions then fail at every key) and through a
// fresh one; and a decoder that learns from these still decodes the
// writer's lines.
func TestDecodeKeysInAnyOrder(t *testing.T) {
	lines := corpusLines(t)
	if testing.Short() {
		lines = everyNth(lines, 32)
	}
	var d eventDecoder
	for _, line := range lines { // learn the writer's order
		_ = d.decode(line, new(Event))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var edited [][]byte
	for _, line := range lines {
		var fields map[string]json.RawMessage
		if json.Unmarshal(line, &fields) != nil || len(fields) < 2 {
			continue
		}
		keys := slices.Sorted(maps.Keys(fields))
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		join := func(keys []string, sep string) []byte {
			var b bytes.Buffer
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteString(sep)
				}
				fmt.Fprintf(&b, "%q:%s", k, fields[k])
			}
			b.WriteByte('}')
			return b.Bytes()
		}
		edited = append(edited,
			join(keys, ","), // shuffled
			join(slices.Concat(keys, keys[len(keys)-1:]), ","),               // the last key twice
			join(slices.Concat(keys[:1], keys, keys[1:2]), ","),              // the first twice, apart
			bytes.ReplaceAll(join(keys, " , "), []byte(`":`), []byte(`" :`)), // whitespace around
		)
	}
	fresh := new(eventDecoder)
	for _, dec := range []*eventDecoder{&d, fresh} {
		for _, m := range decodeMismatches(dec.decode, edited) {
			t.Error(m)
		}
	}
	for _, m := range decodeMismatches(fresh.decode, everyNth(lines, 4)) { // back to the writer's order
		t.Error(m)
	}
	fast := 0
	for _, line := range edited {
		if fresh.fast(line, new(Event)) {
			fast++
		}
	}
	if fast == 0 {
		t.Errorf("no line of other key orders was taken by the fast path")
	}
}

// TestDecodePredictedKeys: where the decoder predicts a key, a line that
// has that key spelt one byte off (its quotes, a letter, its colon), or
// with whitespace in it, decodes as DecodeStrict decodes it: with room
// after the key (where it compares words) and near the end of the line
// (byte by byte), for every key.
func TestDecodePredictedKeys(t *testing.T) {
	full := Event{Seq: 1, Type: API, Time: 2, Thread: 3, Agent: 4, Queue: 5, Dispatch: 6, Kernel: "k", Family: "f",
		Product: "p", Arch: "a", Context: 7, Label: "l", Buffer: "b", Op: "PASS", Phase: "ENTER", Pass: U64(8), Total: U64(9),
		Corr: &Corr{1, 2, 3}, UserData: U64(10), Call: "c", Result: I64(-11), Status: "SUCCESS", Payload: []string{"x"},
		PayloadSize: U64(12), Info: &DispatchInfo{1, 2, 3, 4, Dim3{1, 1, 1}, Dim3{2, 2, 2}}, Domain: "d",
		Operations: []Op{"PASS"}, OpName: "o", OpID: U64(13), Groups: [][]string{{"g"}}, Service: "s", Start: 14, End: 15,
		Counters: []Counter{{"n", 16}}, Signal: 17, Value: I64(-18), Packets: 19, KernelPackets: 20, Graph: true,
		Grid: &Dim3{3, 3, 3}, Workgroup: &Dim3{4, 4, 4}, Args: []string{"x"}, Addr: 21, Bytes: 22, MemKind: "m",
		Regions: []Region{{23, 24}}, MemIn: "i", MemOut: "o", Digest: "dg", Elements: 25, Runs: []Run{{-26, 27}},
		Code: "W", Message: "msg"}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(appendEvent(nil, &full), &values); err != nil {
		t.Fatal(err)
	}
	if len(values) != len(eventKeys) {
		t.Fatalf("the full event has %d keys, the decoder knows %d", len(values), len(eventKeys))
	}
	tried := 0
	for _, key := range eventKeys[2:] {
		lit := `"` + key + `":`
		for _, tail := range []string{"}", `,"message":"enough bytes after the key for words"}`} {
			line := func(lit string) []byte { return []byte(`{"seq":1,"type":"api",` + lit + string(values[key]) + tail) }
			var d eventDecoder
			if diff := diffDecode(d.decode, line(lit)); diff != "" { // now it predicts key after type
				t.Fatalf("%s: %s", line(lit), diff)
			}
			for j := range lit {
				for _, c := range []byte{'x', '_', ' ', '"', ':', '\\'} {
					if lit[j] == c {
						continue
					}
					edited := line(lit[:j] + string(c) + lit[j+1:])
					if diff := diffDecode(d.decode, edited); diff != "" {
						t.Errorf("%s: %s", edited, diff)
					}
					_ = d.decode(line(lit), new(Event)) // predict it again
					tried++
				}
			}
		}
	}
	t.Logf("%d lines with a predicted key spelt otherwise", tried)
}

// TestDecoderNamesThatBeginAlike: a field's name that begins as, or is the
// beginning of, the name the field had on the line before (which the
// decoder tries first) decodes to itself.
func TestDecoderNamesThatBeginAlike(t *testing.T) {
	var d eventDecoder
	for _, label := range []string{"d8", "d89", "d8", "d", "", "d", "d8\"", "d8", `d8\u0041`, "d8A", "d8é", "d8"} {
		line := []byte(`{"seq":1,"type":"api","label":"` + label + `","kernel":"k"}`)
		if diff := diffDecode(d.decode, line); diff != "" {
			t.Errorf("%s: %s", line, diff)
		}
	}
}
