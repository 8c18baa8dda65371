package simtarget_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	simtarget "github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

func TestZZRace(t *testing.T) {
	path := os.Getenv("ZZ_SPEC")
	if path == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("ZZ_RUNS"))
	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s = spec.Defaults(s)
	fails := map[string]int{}
	for i := 0; i < n; i++ {
		tr, err := simtarget.Sim{Parallel: true}.Run(context.Background(), s, target.Options{})
		if err != nil {
			t.Log(err)
		}
		vs := check.Judge(tr).Violations
		if len(vs) > 0 && fails["dumped"] == 0 {
			fails["dumped"] = 1
			f, _ := os.Create("/tmp/race/fail.ndjson")
			trace.Write(f, tr)
			f.Close()
		}
		for _, v := range vs {
			fails[v.Rule]++
			if fails[v.Rule] == 1 {
				t.Log(v.String())
			}
		}
	}
	t.Logf("%d runs: %v", n, fails)
}
