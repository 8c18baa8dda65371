package rocprof

import (
	"bytes"
	"path/filepath"
	"sort"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/replayspec/replayspec/spec"
)

// The kernel replay groups of the goldens: SQ_WAVES in both groups as a
// pass-invariance canary; the second group splits differently per agent
// kind (MI300X has one TCC counter register, MI210 two), so the same list
// is 3 passes on MI300 and 2 on MI200.
var replayPMC = []string{"--pmc", "SQ_WAVES SQ_INSTS_VALU TCC_HIT", "--pmc", "SQ_WAVES,TCC_MISS,TCC_EA_RDREQ"}

var kernelReplayArgs = append(append([]string{}, replayPMC...), "--replay-mode", "kernel", "--kernel-replay-beta-enabled")

type goldenCase struct {
	name   string
	spec   string
	args   []string
	passes map[uint64]uint64 // dispatch id -> pass count (kernel replay)
	runs   int               // application replay runs
}

func goldenCases() []goldenCase {
	kr := append(append([]string{}, kernelReplayArgs...), "--output-config")
	return []goldenCase{
		{name: "kernel-replay-mi300", spec: "mi300.yaml", args: kr, passes: map[uint64]uint64{1: 3, 2: 3}},
		{name: "kernel-replay-mi200", spec: "mi200.yaml", args: kr, passes: map[uint64]uint64{1: 2, 2: 2}},
		{name: "application-replay-mi300", spec: "mi300.yaml", runs: 2,
			args: []string{"--pmc", "SQ_WAVES", "SQ_INSTS_VALU", "--pmc", "TCC_HIT,GRBM_COUNT", "--output-config"}},
		{name: "kernel-replay-mixed", spec: "mixed.yaml", args: append(kr, "--kernel-trace", "--stats"),
			passes: map[uint64]uint64{1: 3, 2: 2, 3: 2}},
		{name: "kernel-replay-not-replayed-and-filtered", spec: "graph-filter.yaml", passes: map[uint64]uint64{1: 3, 2: 1, 4: 3},
			args: append(append([]string{}, kr...), "--kernel-trace", "--kernel-exclude-regex", "saxpy")},
	}
}

// plan parses args as the command line would, with a spec file.
func plan(t *testing.T, specFile string, args []string) (*Plan, spec.Spec) {
	t.Helper()
	cmd, err := ParseArgs(append(append([]string{}, args...), "--", filepath.Join("testdata", specFile)))
	if err != nil {
		t.Fatalf("ParseArgs: %v", err)
	}
	p, err := cmd.Plan(nil)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	s, err := spec.Load(cmd.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

// profile runs the tool as the command line would.
func profile(t *testing.T, specFile string, args []string) *Result {
	t.Helper()
	p, s := plan(t, specFile, args)
	res, err := Run(p, s)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestGoldens(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			res := profile(t, c.spec, c.args)
			out := res.Files()
			again := profile(t, c.spec, c.args).Files()
			names := make([]string, 0, len(out))
			for n := range out {
				names = append(names, n)
			}
			sort.Strings(names)
			g := goldie.New(t, goldie.WithFixtureDir(filepath.Join("..", "golden", "rocprof", c.name)), goldie.WithNameSuffix(".golden"))
			for _, n := range names {
				if !bytes.Equal(out[n], again[n]) {
					t.Errorf("%s differs between two runs", n)
				}
				g.Assert(t, n, out[n])
			}
			_, problems := validateFiles(t, out)
			for _, p := range Failures(problems) {
				t.Errorf("the validator rejects our own output: %s", p)
			}
			if c.passes != nil {
				got := res.Runs[0].PassCounts()
				for id, n := range c.passes {
					if got[id] != n {
						t.Errorf("dispatch %d: pass count %d, want %d (all: %v)", id, got[id], n, got)
					}
				}
			}
			if c.runs > 0 && len(res.Runs) != c.runs {
				t.Errorf("%d application replay runs, want %d", len(res.Runs), c.runs)
			}
		})
	}
}
