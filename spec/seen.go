package spec

import "github.com/replayspec/replayspec/trace"

// passesSeen refuses a wait for a pass that nothing could see: the tool
// learns that a dispatch is inside a pass from its PASS callbacks, so
// without a kernel_replay subscription that covers PASS a dispatch waiting
// to start during one would wait for ever (found by internal/specgen).
func (v *validator) passesSeen(path string) {
	for _, c := range v.s.Contexts {
		kr := c.Services.KernelReplay
		if kr == nil {
			continue
		}
		if len(kr.Operations) == 0 {
			return
		}
		for _, op := range kr.Operations {
			if op == string(trace.OpPass) {
				return
			}
		}
	}
	v.fail(path, "no context subscribes kernel_replay to PASS, so no pass can be seen to start during: add PASS to a subscription's operations (or leave operations out)")
}
