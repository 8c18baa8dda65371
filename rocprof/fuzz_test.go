package rocprof

import (
	"strings"
	"testing"
)

// Bad command lines and bad JSON never take the tool down.
func FuzzParseArgs(f *testing.F) {
	f.Add("--pmc SQ_WAVES --replay-mode kernel --kernel-replay-beta-enabled -- x.yaml")
	f.Add("--pmc= -d -o -- ")
	f.Add("--pmc A,B --pid 1 --collection-period 1:2:3 --att --spm -f pftrace csv -- x")
	f.Add("--stats=maybe -Tno -Afoo --kernel-iteration-range [1-3,x] -- x")
	f.Fuzz(func(t *testing.T, line string) {
		cmd, err := ParseArgs(strings.Fields(line))
		if err == nil && !cmd.Values.has("input") {
			_, _ = cmd.Plan(nil)
		}
	})
}

func FuzzValidateJSON(f *testing.F) {
	f.Add(`{"rocprofiler-sdk-tool":[{"counters":[{"id":{"handle":1},"name":"SQ_WAVES"}],"callback_records":{"counter_collection":[{"dispatch_data":{"dispatch_info":{"dispatch_id":1,"agent_id":{"handle":1}}},"records":[{"counter_id":{"handle":1},"value":4}],"replay_pass":0}]}}]}`)
	f.Add(`{"rocprofiler-sdk-tool":[{"callback_records":{"counter_collection":[{"dispatch_data":{"dispatch_info":{"dispatch_id":0}}},{"dispatch_data":{"dispatch_info":{"dispatch_id":9}},"replay_pass":7}]}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		_ = ValidateJSON(strings.NewReader(in))
		_ = ValidateJSONWith(strings.NewReader(in), ValidateOptions{Groups: [][]string{{"SQ_WAVES"}, {"TCC_HIT"}}})
		_ = ValidateCSV(strings.NewReader(in))
		_, _ = ReadConfigJSON(strings.NewReader(in))
	})
}
