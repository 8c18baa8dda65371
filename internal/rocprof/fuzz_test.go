package rocprof

import (
	"strings"
	"testing"
)

// Bad command lines and bad JSON never take the tool down.
func FuzzParseArgs(f *testing.F) {
	f.Add("--pmc SQ_WAVES --replay-mode kernel --kernel-replay-beta-enabled -- x.yaml")
	f.Add("--pmc= -d -o -- ")
	f.Add("--pmc A,B --pid 1 --collection-period 1:2:3 --att --spm -f pftrace,csv")
	f.Fuzz(func(t *testing.T, line string) {
		o, err := ParseArgs(strings.Fields(line))
		if err == nil {
			_, _ = o.Check()
		}
	})
}

func FuzzValidateJSON(f *testing.F) {
	f.Add(`{"rocprofiler-sdk-tool":[{"counters":[{"id":{"handle":1},"name":"SQ_WAVES"}],"callback_records":{"counter_collection":[{"dispatch_data":{"dispatch_info":{"dispatch_id":1,"agent_id":{"handle":1}}},"records":[{"counter_id":{"handle":1},"value":4}],"replay_pass":0}]}}]}`)
	f.Add(`{"rocprofiler-sdk-tool":[{"metadata":{"config":{"kernel_replay":true}},"callback_records":{"counter_collection":[{"dispatch_data":{"dispatch_info":{"dispatch_id":0}}},{"dispatch_data":{"dispatch_info":{"dispatch_id":9}},"replay_pass":7}]}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		_ = ValidateJSON(strings.NewReader(in))
		_ = ValidateCSV(strings.NewReader(in))
	})
}
