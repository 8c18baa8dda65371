package rocprof

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// validateFiles writes an output directory and checks it as
// check-rocprofv3 does.
func validateFiles(t *testing.T, files map[string][]byte) ([]string, []Problem) {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checked, ps, err := ValidateDir(dir, ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return checked, ps
}

// doc is one golden results.json (with its config.json beside it) opened
// for editing.
type doc struct {
	golden string
	json   map[string]any
	order  map[string][]string // the key order of each object path, as the golden has it
	config []byte              // nil: validate without config.json
	// post edits the bytes as written, for breakages of the layout that
	// the decoded document cannot hold (a double written as an integer).
	post func([]byte) []byte
}

func openDoc(t *testing.T, golden string, withConfig bool) *doc {
	t.Helper()
	dir := filepath.Join("..", "golden", "rocprof", golden, "replayspec-sim")
	data, err := os.ReadFile(filepath.Join(dir, "1000_results.json.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var config []byte
	if withConfig {
		if config, err = os.ReadFile(filepath.Join(dir, "1000_config.json.golden")); err != nil {
			t.Fatal(err)
		}
	}
	return newDoc(t, golden, data, config)
}

// newDoc opens results.json bytes (and config.json's, nil for none).
func newDoc(t *testing.T, name string, data, config []byte) *doc {
	t.Helper()
	d := &doc{golden: name, order: keyOrders(t, data), config: config}
	if err := json.Unmarshal(data, &d.json); err != nil {
		t.Fatal(err)
	}
	return d
}

// keyOrders records the key order of every object path of a JSON
// document (array elements are "[]"), so that an edited copy can be
// written back as the writer lays it out (RPV-9 judges the layout).
func keyOrders(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	order := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if !slices.Contains(order[path], key) {
					order[path] = append(order[path], key)
				}
				if err := walk(path + "/" + key); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if err := walk(path + "/[]"); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	if err := walk(""); err != nil {
		t.Fatal(err)
	}
	return order
}

// marshal writes the (edited) document back as the writer would: keys in
// the golden's order (new keys last), counter values as doubles, other
// integral numbers as integers.
func (d *doc) marshal() []byte {
	var b bytes.Buffer
	var write func(path string, v any)
	write = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			rank := func(k string) int {
				if i := slices.Index(d.order[path], k); i >= 0 {
					return i
				}
				return len(d.order[path])
			}
			sort.SliceStable(keys, func(i, j int) bool {
				if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
					return ri < rj
				}
				return keys[i] < keys[j]
			})
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				write(path+"/"+k, x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(path+"/[]", e)
			}
			b.WriteByte(']')
		case float64:
			if path == counterValuePath || x != math.Trunc(x) {
				b.WriteString(jsonDouble(x))
			} else {
				b.WriteString(strconv.FormatInt(int64(x), 10))
			}
		default:
			vb, _ := json.Marshal(x)
			b.Write(vb)
		}
	}
	write("", d.json)
	return b.Bytes()
}

func (d *doc) tool() map[string]any {
	return d.json["rocprofiler-sdk-tool"].([]any)[0].(map[string]any)
}

func (d *doc) records() []any {
	return d.tool()["callback_records"].(map[string]any)["counter_collection"].([]any)
}

func (d *doc) setRecords(recs []any) {
	d.tool()["callback_records"].(map[string]any)["counter_collection"] = recs
}

func (d *doc) kernels() []any {
	return d.tool()["buffer_records"].(map[string]any)["kernel_dispatch"].([]any)
}

func (d *doc) setKernels(ks []any) {
	d.tool()["buffer_records"].(map[string]any)["kernel_dispatch"] = ks
}

func info(r any) map[string]any {
	m := r.(map[string]any)
	if dd, ok := m["dispatch_data"]; ok {
		return dd.(map[string]any)["dispatch_info"].(map[string]any)
	}
	return m["dispatch_info"].(map[string]any)
}

// rec returns the record of dispatch id with replay_pass pass.
func (d *doc) rec(t *testing.T, id, pass float64) map[string]any {
	t.Helper()
	return d.records()[d.index(t, id, pass)].(map[string]any)
}

func (d *doc) index(t *testing.T, id, pass float64) int {
	t.Helper()
	for i, r := range d.records() {
		if info(r)["dispatch_id"] == id && r.(map[string]any)["replay_pass"] == pass {
			return i
		}
	}
	t.Fatalf("%s: no record for dispatch %v pass %v", d.golden, id, pass)
	return -1
}

func (d *doc) remove(t *testing.T, id, pass float64) {
	recs := d.records()
	i := d.index(t, id, pass)
	d.setRecords(append(recs[:i:i], recs[i+1:]...))
}

// counterID is the handle of a counter of agent handle agent.
func (d *doc) counterID(t *testing.T, name string, agent float64) float64 {
	t.Helper()
	for _, c := range d.tool()["counters"].([]any) {
		m := c.(map[string]any)
		if m["name"] == name && m["agent_id"].(map[string]any)["handle"] == agent {
			return m["id"].(map[string]any)["handle"].(float64)
		}
	}
	t.Fatalf("no counter %s of agent %v", name, agent)
	return 0
}

// validate checks the document as check-rocprofv3 checks a directory.
func (d *doc) validate(t *testing.T) []Problem {
	t.Helper()
	data := d.marshal()
	if d.post != nil {
		data = d.post(data)
	}
	files := map[string][]byte{"replayspec-sim/1000_results.json": data}
	if d.config != nil {
		files["replayspec-sim/1000_config.json"] = d.config
	}
	_, ps := validateFiles(t, files)
	return ps
}

// The two MI300 goldens are the base: kernel-replay-mi300 has dispatches 1
// and 2, three passes each (groups [SQ_INSTS_VALU SQ_WAVES TCC_HIT] and
// [SQ_WAVES TCC_EA_RDREQ TCC_MISS], the second split over passes 1 and 2
// by the MI300X's single TCC register); kernel-replay-mixed adds an MI210
// (agent handle 3, two passes) and kernel dispatch records.
const (
	mi300 = "kernel-replay-mi300"
	mixed = "kernel-replay-mixed"
)

// One broken document per way a file alone shows rocprofv3 output wrong,
// each made from a correct one by one edit and each reported under its
// rule.
func TestValidatorRejectsBrokenOutputs(t *testing.T) {
	cases := []struct {
		name   string
		golden string
		config bool // validate with config.json (the requested groups)
		edit   func(t *testing.T, d *doc)
		rule   string
		want   string
		reason string
	}{
		{"same group on every pass", mi300, true, func(t *testing.T, d *doc) {
			p0 := d.rec(t, 1, 0)["records"]
			d.rec(t, 1, 1)["records"], d.rec(t, 1, 2)["records"] = p0, p0
		}, "RPV-3", "replay_pass 1 collected [SQ_INSTS_VALU SQ_WAVES TCC_HIT] (those are group 0's), but it should collect counters of group 1",
			"a tool that ignores the published pass collects group 0 every time"},
		{"two passes' groups swapped", mi300, true, func(t *testing.T, d *doc) {
			a, b := d.rec(t, 1, 0), d.rec(t, 1, 1)
			a["records"], b["records"] = b["records"], a["records"]
		}, "RPV-3", "replay_pass 0 collected [SQ_WAVES TCC_EA_RDREQ] (those are group 1's), but it should collect counters of group 0",
			"pass i must collect group i, not some permutation"},
		{"groups shifted by one", mi300, true, func(t *testing.T, d *doc) {
			a, b, c := d.rec(t, 2, 0), d.rec(t, 2, 1), d.rec(t, 2, 2)
			a["records"], b["records"], c["records"] = b["records"], c["records"], a["records"]
		}, "RPV-3", "replay_pass 0 collected [SQ_WAVES TCC_EA_RDREQ]", "an off-by-one in the pass to group map"},
		{"one pass too many", mi300, true, func(t *testing.T, d *doc) {
			extra := map[string]any{}
			for k, v := range d.rec(t, 1, 2) {
				extra[k] = v
			}
			extra["replay_pass"] = 3.0
			d.setRecords(append(d.records(), extra))
		}, "RPV-3", "replay_pass 3 collected [TCC_MISS] after passes 0..2 had collected all 2 requested groups: one pass too many",
			"the pass count must be the group count, not one more"},
		{"one pass too few", mi300, true, func(t *testing.T, d *doc) { d.remove(t, 1, 2) },
			"RPV-3", "requested group(s) the rest of 1 [TCC_MISS] never collected (TCC_MISS in no pass at all): the 2 passes cover groups 0..0 of 2",
			"a pass count one short leaves the last split group uncollected"},
		{"a requested counter never collected", mi300, true, func(t *testing.T, d *doc) {
			r := d.rec(t, 2, 0)
			hit := d.counterID(t, "TCC_HIT", 2)
			var keep []any
			for _, v := range r["records"].([]any) {
				if v.(map[string]any)["counter_id"].(map[string]any)["handle"] != hit {
					keep = append(keep, v)
				}
			}
			r["records"] = keep
		}, "RPV-3", "requested counter(s) TCC_HIT of group 0 never collected", "a counter dropped from its group"},
		{"all counter values zero", mi300, true, func(t *testing.T, d *doc) {
			for _, r := range d.records() {
				for _, v := range r.(map[string]any)["records"].([]any) {
					v.(map[string]any)["value"] = 0.0
				}
			}
		}, "RPV-3", "every counter value in the file (12, dimension instances added up) is 0", "counters configured but never read"},
		{"a pass index repeated", mi300, true, func(t *testing.T, d *doc) { d.rec(t, 1, 1)["replay_pass"] = 0.0 },
			"RPV-8", "dispatch 1: replay_pass 0 appears 2 times", "a later pass claiming to be pass 0"},
		{"a pass index skipped", mi300, true, func(t *testing.T, d *doc) { d.rec(t, 1, 2)["replay_pass"] = 3.0 },
			"RPV-8", "dispatch 1: replay_pass 2 is missing: passes must run 0..3 without a gap", "pass indices count 0..N-1"},
		{"records of one pass split across dispatch ids", mi300, true, func(t *testing.T, d *doc) {
			info(d.rec(t, 2, 1))["dispatch_id"] = 3.0
			info(d.rec(t, 2, 2))["dispatch_id"] = 3.0
		}, "RPV-8", "dispatch 3: replay_pass 0 is missing: passes must run 0..2 without a gap (a dispatch's passes start at 0",
			"DID-1: every pass reuses the one reserved id; dispatch 2 alone would look like a dispatch that was not replayed"},
		{"passes of one dispatch spread over two ids", mi300, true, func(t *testing.T, d *doc) {
			info(d.rec(t, 1, 1))["dispatch_id"] = 2.0
		}, "RPV-8", "dispatch 2: replay_pass 1 appears 2 times", "a pass filed under its neighbour's id"},
		{"pass-independent counter differs", mi300, true, func(t *testing.T, d *doc) {
			first := d.rec(t, 1, 1)["records"].([]any)[0].(map[string]any) // SQ_WAVES, first XCC
			first["value"] = first["value"].(float64) + 1
		}, "RPV-8", "SQ_WAVES is 4 in replay_pass 0 but 5 in replay_pass 1", "memory not restored between passes"},
		{"dispatch id zero", mi300, true, func(t *testing.T, d *doc) {
			for _, p := range []float64{0, 1, 2} {
				info(d.rec(t, 1, p))["dispatch_id"] = 0.0
			}
		}, "RPV-8", "dispatch_id 0", "0 is the unset sentinel"},
		{"records of two dispatches under one id", mi300, true, func(t *testing.T, d *doc) {
			info(d.rec(t, 1, 1))["kernel_id"] = 9.0
		}, "RPV-8", "share the dispatch id but not the agent, kernel or queue", "DID-2"},
		{"kernel records and counter records disagree", mixed, true, func(t *testing.T, d *doc) {
			ks := d.kernels()
			d.setKernels(ks[1:]) // dispatch 1's first pass
		}, "RPV-8", "dispatch 1: 2 kernel dispatch records but 3 counter records", "every pass is one execution"},
		{"dispatch ids not contiguous", mixed, true, func(t *testing.T, d *doc) {
			for _, r := range d.records() {
				if info(r)["dispatch_id"] == 3.0 {
					info(r)["dispatch_id"] = 7.0
				}
			}
			for _, k := range d.kernels() {
				if info(k)["dispatch_id"] == 3.0 {
					info(k)["dispatch_id"] = 7.0
				}
			}
		}, "RPV-8", "no counter and kernel dispatch record for 3, 4, 5, 6", "the dispatch counter advances once per dispatch"},
		{"pass count differs on one agent", mixed, false, func(t *testing.T, d *doc) {
			recs := d.records()
			extra := map[string]any{}
			for k, v := range d.rec(t, 3, 1) {
				extra[k] = v
			}
			extra["replay_pass"] = 2.0
			d.setRecords(append(recs, extra))
		}, "RPV-8", "3 passes, but dispatch 2 on the same agent 3 had 2", "one agent, one group count"},
		{"pass collects another group (no config.json)", mixed, false, func(t *testing.T, d *doc) {
			a, b := d.rec(t, 3, 0), d.rec(t, 3, 1)
			a["records"], b["records"] = b["records"], a["records"]
		}, "RPV-3", "replay_pass 0 collected [SQ_WAVES TCC_EA_RDREQ TCC_MISS], but the same pass of dispatch 2 on agent 3 collected",
			"without the requested groups, pass i must at least be the same group on every dispatch"},
		{"replay_pass missing", mi300, true, func(t *testing.T, d *doc) { delete(d.rec(t, 2, 1), "replay_pass") },
			"RPV-6", "has no replay_pass although the run used kernel replay", "RPV-6"},
		{"replay_pass not a pass index", mi300, true, func(t *testing.T, d *doc) { d.rec(t, 2, 1)["replay_pass"] = "one" },
			"RPV-6", `replay_pass is "one", not a pass index`, "RPV-6"},
		{"the pass named n", mi300, true, func(t *testing.T, d *doc) {
			r := d.rec(t, 2, 1)
			r["n"] = r["replay_pass"]
			delete(r, "replay_pass")
		}, "RPV-6", `it has a field "n", which no rocprofv3 writer emits`, "only replay_pass is what a writer emits"},
		{"a pass above 0 without kernel replay", "application-replay-mi300/pass_1", true, func(t *testing.T, d *doc) {
			d.records()[1].(map[string]any)["replay_pass"] = 1.0
		}, "RPV-6", "has replay_pass 1 in a run without kernel replay", "application replay's runs are not replayed"},
		{"several records share a dispatch id without replay", "application-replay-mi300/pass_1", true, func(t *testing.T, d *doc) {
			info(d.records()[1])["dispatch_id"] = 1.0
		}, "RPV-6", "2 counter records share the dispatch id in a run without kernel replay", "one run, one record per dispatch"},
		{"a counter the counters list does not name", mi300, true, func(t *testing.T, d *doc) {
			d.rec(t, 1, 0)["records"].([]any)[0].(map[string]any)["counter_id"] = map[string]any{"handle": 42.0}
		}, "RPV-9", "has counter_id 42, which the file's counters list does not name", "a reader maps ids to names"},
		// Identity and referential integrity (RPV-9), ranges (RPV-3), each
		// pass its own timestamps (DID-4).
		{"a counter id listed twice", mi300, true, func(t *testing.T, d *doc) {
			cs := d.tool()["counters"].([]any)
			dup := map[string]any{}
			for k, v := range cs[1].(map[string]any) {
				dup[k] = v
			}
			dup["id"] = cs[0].(map[string]any)["id"]
			d.tool()["counters"] = append(cs, dup)
		}, "RPV-9", "is listed twice in counters", "an id names one counter of one agent"},
		{"an agent id listed twice", mixed, true, func(t *testing.T, d *doc) {
			as := d.tool()["agents"].([]any)
			as[2].(map[string]any)["id"] = as[1].(map[string]any)["id"]
		}, "RPV-9", "agent id 2 is listed twice in agents", "an id names one agent"},
		{"no agents", mi300, true, func(t *testing.T, d *doc) { d.tool()["agents"] = []any{} },
			"RPV-9", "agents is empty", "the writer lists every agent"},
		{"a record on an agent not listed", mi300, true, func(t *testing.T, d *doc) {
			for _, p := range []float64{0, 1, 2} {
				info(d.rec(t, 2, p))["agent_id"] = map[string]any{"handle": 9.0}
			}
		}, "RPV-9", "counter_collection[3] is on agent 9, which the agents list does not name", "a record's agent is a listed agent"},
		{"counter ids of another agent", mixed, true, func(t *testing.T, d *doc) {
			r := d.rec(t, 3, 0) // on the MI210, agent 3
			r["records"].([]any)[0].(map[string]any)["counter_id"] = map[string]any{"handle": d.counterID(t, "SQ_WAVES", 2)}
		}, "RPV-9", "which the counters list gives to agent 2, but the record is on agent 3", "counter ids are per agent"},
		{"a negative counter value", mi300, true, func(t *testing.T, d *doc) {
			d.rec(t, 2, 2)["records"].([]any)[0].(map[string]any)["value"] = -3.0
		}, "RPV-3", "TCC_MISS is -3, a negative count", "a count is never negative"},
		{"every pass with pass 0's timestamps", mi300, true, func(t *testing.T, d *doc) {
			p0 := d.rec(t, 1, 0)["dispatch_data"].(map[string]any)
			for _, p := range []float64{1, 2} {
				dd := d.rec(t, 1, p)["dispatch_data"].(map[string]any)
				dd["start_timestamp"], dd["end_timestamp"] = p0["start_timestamp"], p0["end_timestamp"]
			}
		}, "DID-4", "dispatch 1: counter records: replay_pass 1, replay_pass 2 have the start and end timestamps of replay_pass 0", "a pass that did not run again"},
		{"kernel dispatch records with one time", mixed, true, func(t *testing.T, d *doc) {
			var one []map[string]any // dispatch 1's three executions
			for _, k := range d.kernels() {
				if info(k)["dispatch_id"] == 1.0 {
					one = append(one, k.(map[string]any))
				}
			}
			for _, k := range one[1:] {
				k["start_timestamp"], k["end_timestamp"] = one[0]["start_timestamp"], one[0]["end_timestamp"]
			}
		}, "DID-4", "kernel dispatch records: execution 2, execution 3 have the start and end timestamps of execution 1", "one trace row per pass, each timed"},
		// Without config.json: what the file itself says about the groups.
		{"one pass too few, no config.json", mi300, false, func(t *testing.T, d *doc) {
			d.remove(t, 1, 2)
			d.remove(t, 2, 2)
		}, "RPV-3", "counter(s) TCC_MISS never collected in the 2 passes, although the counters list names them for agent 2",
			"rocprofv3 lists only the requested counters, so the passes together collect all of them"},
		{"the same group on every pass, no config.json", mi300, false, func(t *testing.T, d *doc) {
			for _, id := range []float64{1, 2} {
				p0 := d.rec(t, id, 0)["records"]
				d.rec(t, id, 1)["records"], d.rec(t, id, 2)["records"] = p0, p0
			}
		}, "RPV-3", "replay_pass 0 collected [SQ_INSTS_VALU SQ_WAVES TCC_HIT], nothing that the dispatch's other passes do not also collect",
			"every dispatch equally wrong: only the passes' own groups show it"},
		// RPV-9: laid out as the writer lays it out.
		{"counter values written as integers", mi300, true, func(t *testing.T, d *doc) {
			d.post = func(b []byte) []byte {
				return regexp.MustCompile(`"value":([0-9]+)\.0\b`).ReplaceAll(b, []byte(`"value":$1`))
			}
		}, "RPV-9", "counter_collection[0].records[0].value is written 1, an integer: the writer writes a counter value as a double (1.0) (96 places like it)",
			"rapidjson writes a double with its fraction; a consumer that reads doubles reads 1.0"},
		{"a counter value null", mi300, true, func(t *testing.T, d *doc) {
			d.rec(t, 2, 1)["records"].([]any)[3].(map[string]any)["value"] = nil
		}, "RPV-9", "counter_collection[4].records[3].value is null", "the writer writes every value; null is no count"},
		{"a counter record's keys out of order", mi300, true, func(t *testing.T, d *doc) {
			d.order[counterRecordPath] = []string{"replay_pass", "thread_id", "dispatch_data", "records", "stream_id"}
		}, "RPV-9", `in rocprofiler-sdk-tool[]/callback_records/counter_collection[], "thread_id" comes after "replay_pass"`,
			"a streaming reader follows the writer's order"},
		{"buffer_records before callback_records", mi300, true, func(t *testing.T, d *doc) {
			o := d.order["/rocprofiler-sdk-tool/[]"]
			i, j := slices.Index(o, "callback_records"), slices.Index(o, "buffer_records")
			o[i], o[j] = o[j], o[i]
		}, "RPV-9", `in rocprofiler-sdk-tool[], "callback_records" comes after "buffer_records"`, "the top-level sections in the writer's order"},
		{"a second top-level key", mi300, true, func(t *testing.T, d *doc) { d.json["replay"] = true },
			"RPV-9", `the top level has key "replay"`, "the writer writes one top-level key"},
		{"no strings section", mi300, true, func(t *testing.T, d *doc) { delete(d.tool(), "strings") },
			"RPV-9", `rocprofiler-sdk-tool[] has no "strings"`, "consumers look kinds and dimensions up there"},
		{"name tables empty", mi300, true, func(t *testing.T, d *doc) {
			d.tool()["strings"].(map[string]any)["buffer_records"] = []any{}
		}, "RPV-9", "strings.buffer_records is empty", "consumers name a record's kind through the table"},
		{"a kernel dispatch record of another kind", mixed, true, func(t *testing.T, d *doc) {
			d.kernels()[2].(map[string]any)["kind"] = 10.0
		}, "RPV-9", `buffer_records.kernel_dispatch[2] has kind 10, which strings.buffer_records names "MEMORY_COPY"`,
			"kind 11 is KERNEL_DISPATCH; a record filed there under another kind is misnamed"},
		{"a kernel dispatch operation the table does not name", mixed, true, func(t *testing.T, d *doc) {
			d.kernels()[0].(map[string]any)["operation"] = 7.0
		}, "RPV-9", "has operation 7, which strings.buffer_records[11].operations does not name", "operation 2 is KERNEL_DISPATCH_COMPLETE"},
		{"not rocprofv3 output", mi300, false, func(t *testing.T, d *doc) { delete(d.json, "rocprofiler-sdk-tool") },
			"FORMAT", "rocprofiler-sdk-tool", "FORMAT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openDoc(t, c.golden, c.config)
			c.edit(t, d)
			ps := d.validate(t)
			found := false
			for _, p := range ps {
				if p.Rule == c.rule && strings.Contains(p.String(), c.want) && strings.Contains(p.String(), c.rule+": ") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: want a %s problem containing %q, got %v", c.reason, c.rule, c.want, ps)
			}
		})
	}
}

// Correct documents, including the two legitimate situations that break
// the plain pattern, pass.
func TestValidatorAcceptsLegitimateOutputs(t *testing.T) {
	filtered := "kernel-replay-not-replayed-and-filtered"
	cases := []struct {
		name   string
		golden string
		config bool
		edit   func(d *doc)
		reason string
		note   string // the note the report must carry, "" for none
	}{
		{"every golden kernel replay run", mixed, true, nil, "our own output", ""},
		{"application replay without config.json", "application-replay-mi300/pass_2", false, nil, "our own output", ""},
		{"dispatches that were not replayed, and a filtered-out one", filtered, true, nil,
			"the graph launch (3) and the multi-packet submission (5) run once with pass 0; saxpy (2) collects nothing under --kernel-exclude-regex",
			"dispatch(es) 3, 5 on agent 2 ran once (replay_pass 0 only) while dispatch 1 on that agent replayed 3 passes; their kernel dispatch records show one execution each"},
		{"the same without kernel dispatch records", filtered, true, func(d *doc) { d.setKernels([]any{}) },
			"config.json shows a kernel filter, so the gap at 2 is not a missing dispatch",
			"and no kernel dispatch records show how many times they ran"},
		{"the same without config.json", filtered, false, func(d *doc) { d.setKernels([]any{}) },
			"without config.json the validator cannot know the filters, so it does not judge gaps",
			"a replay that never started look the same in the file: this is not judged"},
		{"a writer from before kernel replay", "application-replay-mi300/pass_1", false, func(d *doc) {
			for _, r := range d.records() {
				delete(r.(map[string]any), "replay_pass")
			}
		}, "older rocprofv3 writers emit no replay_pass; a run without replay needs none", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openDoc(t, c.golden, c.config)
			if c.edit != nil {
				c.edit(d)
			}
			ps := d.validate(t)
			if f := Failures(ps); len(f) != 0 {
				t.Errorf("%s: %v", c.reason, f)
			}
			var notes []string
			for _, p := range ps {
				if p.Note {
					notes = append(notes, p.String())
				}
			}
			switch {
			case c.note == "" && len(notes) > 0:
				t.Errorf("%s: unexpected notes %v", c.reason, notes)
			case c.note != "" && (len(notes) != 1 || !strings.Contains(notes[0], c.note)):
				t.Errorf("%s: want one note saying %q, got %v", c.reason, c.note, notes)
			}
		})
	}
}

// A dispatch whose snapshot cannot be completed runs once (MEM-5): its one
// record, pass 0, must not fail the checks while its neighbours replay.
func TestValidatorAcceptsFailedSnapshot(t *testing.T) {
	res := profile(t, "snapshot-limit.yaml", append(append([]string{}, kernelReplayArgs...), "--output-config", "--kernel-trace"))
	passes := map[uint64]int{}
	for _, r := range res.Runs[0].Counters {
		passes[r.Dispatch.DispatchID]++
	}
	if passes[1] != 3 || passes[2] != 1 {
		t.Fatalf("records per dispatch %v, want 1:3 (small buffer, replayed) and 2:1 (snapshot too large, run once)", passes)
	}
	_, ps := validateFiles(t, res.Files())
	if f := Failures(ps); len(f) != 0 {
		t.Errorf("a dispatch that was not replayed is legitimate: %v", f)
	}
	if len(ps) != 1 || !ps[0].Note || !strings.Contains(ps[0].Msg, "dispatch(es) 2 on agent 3 ran once (replay_pass 0 only) although the counters the file lists for the agent need more than one pass") {
		t.Errorf("the report should say that dispatch 2's single run is not judged: %v", ps)
	}
}

func TestValidateJSONBadInput(t *testing.T) {
	for _, in := range []string{"", "{", "[]", `{"rocprofiler-sdk-tool": 3}`, `{"rocprofiler-sdk-tool": []}`,
		`{"rocprofiler-sdk-tool": [{"callback_records": {"counter_collection": [{}]}}]}`} {
		ps := ValidateJSON(strings.NewReader(in))
		if len(ps) == 0 || ps[0].Rule != "FORMAT" {
			t.Errorf("%q: %v, want a FORMAT problem", in, ps)
		}
	}
}

func TestValidateCSV(t *testing.T) {
	good := `"` + strings.Join(CounterCSVColumns, `","`) + `"` + "\n"
	row := `2,1,"Agent 1",1,1000,1000,256,1,"increment",64,0,0,8,0,16,"SQ_WAVES",4.000000,1002000,1003160` + "\n"
	if ps := ValidateCSV(strings.NewReader(good + row)); len(ps) != 0 {
		t.Errorf("reference header and row rejected: %v", ps)
	}
	withPass := strings.TrimSuffix(good, "\n") + `,"Replay_Pass"` + "\n"
	ps := ValidateCSV(strings.NewReader(withPass))
	if len(ps) != 1 || ps[0].Rule != "RPV-6" || !strings.Contains(ps[0].Msg, "Replay_Pass column") {
		t.Errorf("Replay_Pass column: %v", ps)
	}
	ps = ValidateCSV(strings.NewReader(`"Dispatch_Id","Counter_Name"` + "\n"))
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, "Correlation_Id") {
		t.Errorf("missing columns: %v", ps)
	}
	// RPV-9: the writer's number forms and quoting.
	for _, c := range []struct{ from, to, want string }{
		{"4.000000", "four", `Counter_Value "four" is not a number`},
		{"4.000000", `"4.000000"`, `Counter_Value "4.000000" is in double quotes`},
		{"4.000000", "4", `Counter_Value "4" is not written as the writer writes this value (%.6f from 1 up, %.8e below: 4.000000)`},
		{"4.000000", "4.0000000", `(%.6f from 1 up, %.8e below: 4.000000)`},
		{"4.000000", "1.00000000e+00", `Counter_Value "1.00000000e+00" is not written as the writer writes this value (%.6f from 1 up, %.8e below: 1.000000)`},
		{"4.000000", "nan", `Counter_Value "nan" is not a finite number`},
		{`"Agent 1"`, "Agent 1", `Agent_Id "Agent 1" is not in double quotes`},
		{`"Agent 1"`, `"agent-1"`, `Agent_Id "agent-1" does not name an agent`},
		{`"increment"`, "increment", `Kernel_Name "increment" is not in double quotes`},
		{",1000,1000,", ",1000,-1000,", `Thread_Id "-1000" is not an unsigned integer`},
		{"1003160", "1003160,7", `has 20 fields, the header 19`},
	} {
		ps = ValidateCSV(strings.NewReader(good + strings.Replace(row, c.from, c.to, 1)))
		if len(ps) != 1 || ps[0].Rule != "RPV-9" || !strings.Contains(ps[0].Msg, c.want) {
			t.Errorf("%s written %s: %v, want one RPV-9 problem saying %q", c.from, c.to, ps, c.want)
		}
	}
	if ps := ValidateCSV(strings.NewReader(good + strings.Replace(row, "4.000000", "0.50000000", 1))); len(ps) != 1 || !strings.Contains(ps[0].Msg, "5.00000000e-01") {
		t.Errorf("0.5 written %%.8f: %v, want the writer's %%.8e form named", ps)
	}
	if ps := ValidateCSV(strings.NewReader(strings.Replace(good, `"Agent_Id"`, "Agent_Id", 1) + row)); len(ps) != 1 || ps[0].Rule != "RPV-9" || !strings.Contains(ps[0].Msg, "header field(s) Agent_Id not in double quotes") {
		t.Errorf("an unquoted header field: %v", ps)
	}
	// A kernel name may hold a comma: the writer does not escape it, and a
	// reader splits at the closing quote.
	if ps := ValidateCSV(strings.NewReader(good + strings.Replace(row, `"increment"`, `"sum<int, float>"`, 1))); len(ps) != 0 {
		t.Errorf("a kernel name with a comma: %v", ps)
	}
	if ps := ValidateCSV(strings.NewReader("")); len(ps) != 1 || ps[0].Rule != "FORMAT" {
		t.Errorf("empty CSV: %v", ps)
	}
}

func TestValidateDir(t *testing.T) {
	dir := t.TempDir()
	res := profile(t, "mi300.yaml", []string{"--pmc", "SQ_WAVES", "--pmc", "TCC_HIT", "--pmc", "GRBM_COUNT", "-f", "csv", "json", "-d", dir})
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	checked, ps, err := ValidateDir(dir, ValidateOptions{})
	if err != nil || len(ps) != 0 || len(checked) != 9 { // results.json, counter_collection.csv, agent_info.csv per pass
		t.Fatalf("checked %v, problems %v, err %v", checked, ps, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "pass_2")); err != nil {
		t.Fatal(err)
	}
	_, ps, _ = ValidateDir(dir, ValidateOptions{})
	if len(ps) != 1 || ps[0].Rule != "RPV-5" || !strings.Contains(ps[0].Msg, "found pass_1, pass_3") {
		t.Errorf("a missing pass folder: %v", ps)
	}
	if _, _, err := ValidateDir(t.TempDir(), ValidateOptions{}); err == nil {
		t.Error("an empty directory validated")
	}
	// A text input file's jobs run in pmc_N, numbered with the command
	// line's pass_N: pass_1 and pmc_3 leave 2 out; pmc_1 beside pass_1 is
	// a repeat.
	if err := os.Rename(filepath.Join(dir, "pass_3"), filepath.Join(dir, "pmc_2")); err != nil {
		t.Fatal(err)
	}
	if _, ps, _ = ValidateDir(dir, ValidateOptions{}); len(ps) != 0 {
		t.Errorf("pass_1, pmc_2: %v", ps)
	}
	if err := os.Rename(filepath.Join(dir, "pmc_2"), filepath.Join(dir, "pmc_1")); err != nil {
		t.Fatal(err)
	}
	_, ps, _ = ValidateDir(dir, ValidateOptions{})
	if len(ps) != 1 || ps[0].Rule != "RPV-5" || !strings.Contains(ps[0].Msg, "found pass_1, pmc_1") {
		t.Errorf("pass_1 and pmc_1: %v", ps)
	}
}

// The groups can come from the caller (check-rocprofv3 --pmc) when there
// is no config.json; wrong groups are then reported.
func TestValidateWithGivenGroups(t *testing.T) {
	d := openDoc(t, mi300, false)
	data := d.marshal()
	right := [][]string{{"SQ_WAVES", "SQ_INSTS_VALU", "TCC_HIT"}, {"SQ_WAVES", "TCC_MISS", "TCC_EA_RDREQ"}}
	if ps := ValidateJSONWith(strings.NewReader(string(data)), ValidateOptions{Groups: right}); len(ps) != 0 {
		t.Errorf("the groups the run used: %v", ps)
	}
	wrong := [][]string{right[1], right[0]}
	ps := ValidateJSONWith(strings.NewReader(string(data)), ValidateOptions{Groups: wrong})
	if len(ps) == 0 || ps[0].Rule != "RPV-3" {
		t.Errorf("groups in the other order: %v", ps)
	}
}

// A huge pass index is reported, not walked.
func TestValidateHugePass(t *testing.T) {
	in := `{"rocprofiler-sdk-tool":[{"callback_records":{"counter_collection":[` +
		`{"dispatch_data":{"dispatch_info":{"dispatch_id":1}},"replay_pass":0},` +
		`{"dispatch_data":{"dispatch_info":{"dispatch_id":1}},"replay_pass":9223372036854775807}]}}]}`
	ps := ValidateJSON(strings.NewReader(in))
	if len(ps) == 0 || !strings.Contains(ps[0].Msg, "replay_pass 1, 2, 3") || ps[0].Rule != "RPV-8" {
		t.Errorf("%v", ps)
	}
}
