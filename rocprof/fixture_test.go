package rocprof

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var fixtureArgs = []string{"--pmc", "SQ_WAVES,GRBM_COUNT", "--pmc", "TCC_HIT", "--replay-mode", "kernel",
	"--kernel-replay-beta-enabled", "--kernel-trace", "--stats", "-o", "run"}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fixture", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Our files against output written by hand from the reference writers'
// rules (testdata/fixture/README.md says which rule comes from where).
func TestFixtures(t *testing.T) {
	files := profile(t, "fixture/fixture.yaml", fixtureArgs).Files()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	want := []string{"run_agent_info.csv", "run_counter_collection.csv", "run_domain_stats.csv", "run_kernel_stats.csv",
		"run_kernel_trace.csv", "run_results.json"}
	if !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	for _, name := range want[:5] {
		if got, exp := files[name], readFixture(t, name); !bytes.Equal(got, exp) {
			t.Errorf("%s differs from the hand-written fixture:\n--- ours\n%s--- fixture\n%s", name, got, exp)
		}
	}

	js := files["run_results.json"]
	for _, excerpt := range []string{"counter_record.json", "kernel_dispatch_record.json", "counter.json"} {
		if !bytes.Contains(js, bytes.TrimRight(readFixture(t, excerpt), "\n")) {
			t.Errorf("results.json does not hold the hand-written %s", excerpt)
		}
	}
	if bytes.HasSuffix(js, []byte("\n")) || !bytes.HasPrefix(js, []byte("{\n\"rocprofiler-sdk-tool\": [\n{\n\"metadata\": {\n\"node\": {")) {
		t.Errorf("results.json is not laid out as the reference's writer lays it out: %.80q ... %q", js, js[len(js)-10:])
	}
	for _, line := range strings.Split(string(js), "\n") {
		if strings.HasPrefix(line, " ") {
			t.Errorf("an indented line (the writer is opened with indent 0): %q", line)
			break
		}
	}
	var doc struct {
		Tool []orderedObject `json:"rocprofiler-sdk-tool"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	tool := doc.Tool[0]
	for _, c := range []struct {
		path []string
		keys []string
	}{
		{nil, []string{"metadata", "agents", "counters", "strings", "code_objects", "kernel_symbols", "host_functions",
			"summary", "callback_records", "buffer_records"}},
		{[]string{"metadata"}, []string{"node", "pid", "init_time", "fini_time", "command", "config"}},
		{[]string{"callback_records"}, []string{"counter_collection", "spm_counter_collection"}},
		{[]string{"buffer_records"}, []string{"kernel_dispatch", "hip_api", "hsa_api", "marker_api", "rccl_api", "memory_copy",
			"memory_allocation", "scratch_memory", "kfd", "rocdecode_api", "rocjpeg_api", "hipfile_api", "pc_sample_host_trap",
			"pc_sample_stochastic", "hip_graph", "rocshmem_api"}},
	} {
		o := tool
		for _, k := range c.path {
			o = o.child(t, k)
		}
		if !slices.Equal(o.keys, c.keys) {
			t.Errorf("keys of %v: %v, want %v", c.path, o.keys, c.keys)
		}
	}
	config := tool.child(t, "metadata").child(t, "config")
	for _, invented := range []string{"kernel_replay", "replay_mode", "pmc", "application_replay_pass", "counters"} {
		if slices.Contains(config.keys, invented) {
			t.Errorf("metadata.config has %q: results.json's config is the output configuration only", invented)
		}
	}
}

// orderedObject keeps an object's keys in order (and its members raw).
type orderedObject struct {
	keys []string
	raw  map[string]json.RawMessage
}

func (o *orderedObject) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return err
	}
	o.raw = map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		k := tok.(string)
		o.keys = append(o.keys, k)
		o.raw[k] = v
	}
	return nil
}

func (o orderedObject) child(t *testing.T, key string) orderedObject {
	t.Helper()
	var c orderedObject
	if err := json.Unmarshal(o.raw[key], &c); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return c
}

// The number formats, case by case, with the rule each case shows.
func TestNumberFormats(t *testing.T) {
	cases := []struct {
		f      func(float64) string
		in     float64
		want   string
		reason string
	}{
		{csvDouble, 16384, "16384.000000", "csv.hpp: fixed, 6 decimals, from 1 up"},
		{csvDouble, 1, "1.000000", "1 is fixed"},
		{csvDouble, 0, "0.00000000e+00", "below 1: scientific, 8 decimals"},
		{csvDouble, 0.5, "5.00000000e-01", "below 1"},
		{csvDouble, 1234.5678901, "1234.567890", "6 decimals"},
		{statsDouble, 1055, "1055.000000", "statistics.cpp: fixed above 0.01"},
		{statsDouble, 0.02, "0.020000", "above 0.01"},
		{statsDouble, 0.01, "1.00000000e-02", "0.01 itself is scientific"},
		{statsDouble, 0, "0.00000000e+00", "a zero deviation"},
		{statsPercent, 100, "100.00", "percentage: 2 decimals from 1"},
		{statsPercent, 1, "1.00", "1 has 2 decimals"},
		{statsPercent, 0.5, "0.5000", "4 decimals above 0.01"},
		{statsPercent, 0.001, "1.000e-03", "scientific with 3 below"},
		{jsonDouble, 4, "4.0", "rapidjson: an integral double ends in .0"},
		{jsonDouble, 0, "0.0", "zero"},
		{jsonDouble, 2080, "2080.0", "integral"},
		{jsonDouble, 0.25, "0.25", "shortest digits"},
		{jsonDouble, 1.5e30, "1.5e30", "beyond 21 digits: exponent"},
		{jsonDouble, 1e-7, "1e-7", "small: exponent"},
		{jsonDouble, 0.0001, "0.0001", "down to 1e-6 without exponent"},
		{jsonDouble, -3, "-3.0", "negative"},
		{jsonDouble, 123456789012345680000, "123456789012345680000.0", "up to 21 integral digits"},
	}
	for _, c := range cases {
		if got := c.f(c.in); got != c.want {
			t.Errorf("%v -> %q, want %q (%s)", c.in, got, c.want, c.reason)
		}
	}
}
