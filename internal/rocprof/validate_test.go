package rocprof

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goodJSON is the mixed-agent kernel replay golden: dispatch 1 on the
// MI300 (3 passes), dispatches 2 and 3 on the MI200 (2 passes each).
func goodJSON(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "golden", "rocprof", "kernel-replay-mixed", "1000_results.json.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func records(doc map[string]any) []any {
	tool := doc["rocprofiler-sdk-tool"].([]any)[0].(map[string]any)
	return tool["callback_records"].(map[string]any)["counter_collection"].([]any)
}

func setRecords(doc map[string]any, recs []any) {
	tool := doc["rocprofiler-sdk-tool"].([]any)[0].(map[string]any)
	tool["callback_records"].(map[string]any)["counter_collection"] = recs
}

// find returns the index of the record of dispatch id with replay_pass pass.
func find(t *testing.T, recs []any, id, pass float64) int {
	t.Helper()
	for i, r := range recs {
		m := r.(map[string]any)
		info := m["dispatch_data"].(map[string]any)["dispatch_info"].(map[string]any)
		if info["dispatch_id"] == id && m["replay_pass"] == pass {
			return i
		}
	}
	t.Fatalf("no record for dispatch %v pass %v", id, pass)
	return -1
}

func rec(recs []any, i int) map[string]any { return recs[i].(map[string]any) }

func setDispatchID(r map[string]any, id float64) {
	r["dispatch_data"].(map[string]any)["dispatch_info"].(map[string]any)["dispatch_id"] = id
}

func validate(t *testing.T, doc map[string]any) []Problem {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return ValidateJSON(bytes.NewReader(data))
}

func TestValidatorAcceptsGoldens(t *testing.T) {
	if ps := validate(t, goodJSON(t)); len(ps) != 0 {
		t.Fatalf("problems in the golden: %v", ps)
	}
}

// One broken output per check, each rejected with a message naming the rule.
func TestValidatorRejectsBrokenOutputs(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, doc map[string]any)
		rule   string
		want   string
	}{
		{"replay_pass missing", func(t *testing.T, doc map[string]any) {
			delete(rec(records(doc), find(t, records(doc), 2, 1)), "replay_pass")
		}, "RPV-6", "has no replay_pass although the run used kernel replay"},
		{"replay_pass not a pass index", func(t *testing.T, doc map[string]any) {
			rec(records(doc), find(t, records(doc), 2, 1))["replay_pass"] = "one"
		}, "RPV-6", "not a pass index"},
		{"pass appears twice", func(t *testing.T, doc map[string]any) {
			recs := records(doc)
			setRecords(doc, append(recs, recs[find(t, recs, 1, 2)]))
		}, "RPV-8", "replay_pass 2 appears 2 times"},
		{"pass missing", func(t *testing.T, doc map[string]any) {
			recs := records(doc)
			i := find(t, recs, 1, 1)
			setRecords(doc, append(recs[:i:i], recs[i+1:]...))
		}, "RPV-8", "replay_pass 1 is missing"},
		{"pass count differs on one agent", func(t *testing.T, doc map[string]any) {
			recs := records(doc)
			i := find(t, recs, 3, 1)
			setRecords(doc, append(recs[:i:i], recs[i+1:]...))
		}, "RPV-8", "1 passes, but dispatch 2 on the same agent 2 had 2"},
		{"dispatch id zero", func(t *testing.T, doc map[string]any) {
			setDispatchID(rec(records(doc), find(t, records(doc), 1, 0)), 0)
		}, "RPV-8", "dispatch_id 0"},
		{"dispatch ids not contiguous", func(t *testing.T, doc map[string]any) {
			recs := records(doc)
			for _, p := range []float64{0, 1} {
				setDispatchID(rec(recs, find(t, recs, 3, p)), 7)
			}
		}, "RPV-8", "no record for 3, 4, 5, 6"},
		{"pass-independent counter differs", func(t *testing.T, doc map[string]any) {
			r := rec(records(doc), find(t, records(doc), 1, 1))
			first := r["records"].([]any)[0].(map[string]any) // SQ_WAVES
			first["value"] = first["value"].(float64) + 1
		}, "RPV-8", "SQ_WAVES is 4 in replay_pass 0 but 5 in replay_pass 1"},
		{"pass collects another group", func(t *testing.T, doc map[string]any) {
			recs := records(doc)
			a, b := rec(recs, find(t, recs, 3, 0)), rec(recs, find(t, recs, 3, 1))
			a["records"], b["records"] = b["records"], a["records"]
		}, "RPV-3", "pass i must collect counter group i"},
		{"several records without replay", func(t *testing.T, doc map[string]any) {
			tool := doc["rocprofiler-sdk-tool"].([]any)[0].(map[string]any)
			tool["metadata"].(map[string]any)["config"].(map[string]any)["kernel_replay"] = false
			for _, r := range records(doc) {
				delete(r.(map[string]any), "replay_pass")
			}
		}, "RPV-6", "share the dispatch id and none has replay_pass"},
		{"not rocprofv3 output", func(t *testing.T, doc map[string]any) {
			delete(doc, "rocprofiler-sdk-tool")
		}, "FORMAT", "rocprofiler-sdk-tool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := goodJSON(t)
			c.mutate(t, doc)
			ps := validate(t, doc)
			found := false
			for _, p := range ps {
				if p.Rule == c.rule && strings.Contains(p.String(), c.want) && strings.Contains(p.String(), c.rule+": ") {
					found = true
				}
			}
			if !found {
				t.Errorf("want a %s problem containing %q, got %v", c.rule, c.want, ps)
			}
		})
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
	if ps := ValidateCSV(strings.NewReader(good)); len(ps) != 0 {
		t.Errorf("reference header rejected: %v", ps)
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
	if err != nil || len(ps) != 0 || len(checked) != 6 {
		t.Fatalf("checked %v, problems %v, err %v", checked, ps, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "pass_2")); err != nil {
		t.Fatal(err)
	}
	_, ps, _ = ValidateDir(dir, ValidateOptions{})
	if len(ps) != 1 || ps[0].Rule != "RPV-5" || !strings.Contains(ps[0].Msg, "pass_1, pass_3") {
		t.Errorf("a missing pass folder: %v", ps)
	}
	if _, _, err := ValidateDir(t.TempDir(), ValidateOptions{}); err == nil {
		t.Error("an empty directory validated")
	}
}

// A huge pass index is reported, not walked.
func TestValidateHugePass(t *testing.T) {
	in := `{"rocprofiler-sdk-tool":[{"callback_records":{"counter_collection":[` +
		`{"dispatch_data":{"dispatch_info":{"dispatch_id":1}},"replay_pass":0},` +
		`{"dispatch_data":{"dispatch_info":{"dispatch_id":1}},"replay_pass":9223372036854775807}]}}]}`
	ps := ValidateJSON(strings.NewReader(in))
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, "replay_pass 1, 2, 3") {
		t.Errorf("%v", ps)
	}
}
