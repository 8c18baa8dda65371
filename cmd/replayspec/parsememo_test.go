package main

import (
	"fmt"
	"sync"

	"github.com/replayspec/replayspec/spec"
)

// memoParseCases is spec.ParseCases remembered by file name, content and
// the spec package's settings that a command sets for its run (the memory
// budget, the cases' limit: a parse setting added there must join the
// key), for parseCases in the tests: they run the CLI in this process (the
// scripts' commands, cli()) over the same spec files hundreds of times,
// and the YAML parse under -race was a fifth of the package's CPU. Each
// call gets clones, since a command may change the specs it is handed;
// a file over 1 MiB is parsed each time, not held.
func memoParseCases() func(name string, data []byte) ([]spec.Spec, error) {
	type parsed struct {
		cases []spec.Spec
		err   error
	}
	var mu sync.Mutex
	memo := map[string]parsed{}
	return func(name string, data []byte) ([]spec.Spec, error) {
		if len(data) > 1<<20 {
			return spec.ParseCases(name, data)
		}
		key := fmt.Sprintf("%d %d %q\x00", spec.MemoryBudget(), spec.MaxCases(), name) + string(data)
		mu.Lock()
		p, ok := memo[key]
		mu.Unlock()
		if !ok {
			p.cases, p.err = spec.ParseCases(name, data)
			mu.Lock()
			memo[key] = p
			mu.Unlock()
		}
		if p.cases == nil {
			return nil, p.err
		}
		out := make([]spec.Spec, len(p.cases))
		for i, s := range p.cases {
			out[i] = spec.Clone(s)
		}
		return out, p.err
	}
}
