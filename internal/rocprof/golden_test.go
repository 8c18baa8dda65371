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

type goldenCase struct {
	name   string
	spec   string
	args   []string
	passes map[uint64]uint64 // dispatch id -> pass count (kernel replay)
	dirs   int               // application replay folders
}

func goldenCases() []goldenCase {
	kr := append(append([]string{}, replayPMC...), "--replay-mode", "kernel", "--kernel-replay-beta-enabled", "-f", "csv", "json")
	return []goldenCase{
		{name: "kernel-replay-mi300", spec: "mi300.yaml", args: kr, passes: map[uint64]uint64{1: 3, 2: 3}},
		{name: "kernel-replay-mi200", spec: "mi200.yaml", args: kr, passes: map[uint64]uint64{1: 2, 2: 2}},
		{name: "application-replay-mi300", spec: "mi300.yaml", dirs: 2,
			args: []string{"--pmc", "SQ_WAVES", "SQ_INSTS_VALU", "--pmc", "TCC_HIT,GRBM_COUNT", "-f", "json,csv"}},
		{name: "kernel-replay-mixed", spec: "mixed.yaml", args: kr, passes: map[uint64]uint64{1: 3, 2: 2, 3: 2}},
	}
}

// profile runs the tool as the command line would.
func profile(t *testing.T, specFile string, args []string) *Result {
	t.Helper()
	o, err := ParseArgs(append(append([]string{}, args...), "--", filepath.Join("testdata", specFile)))
	if err != nil {
		t.Fatalf("ParseArgs: %v", err)
	}
	if _, err := o.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	s, err := spec.Load(o.Spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(o, s)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func files(t *testing.T, res *Result) map[string][]byte {
	t.Helper()
	fs, err := res.Files()
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestGoldens(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			res := profile(t, c.spec, c.args)
			out := files(t, res)
			again := files(t, profile(t, c.spec, c.args))
			names := make([]string, 0, len(out))
			for n := range out {
				names = append(names, n)
			}
			sort.Strings(names)
			g := goldie.New(t, goldie.WithFixtureDir(filepath.Join("..", "..", "golden", "rocprof", c.name)), goldie.WithNameSuffix(".golden"))
			for _, n := range names {
				if !bytes.Equal(out[n], again[n]) {
					t.Errorf("%s differs between two runs", n)
				}
				g.Assert(t, n, out[n])
				var problems []Problem
				switch filepath.Ext(n) {
				case ".json":
					problems = ValidateJSON(bytes.NewReader(out[n]))
				case ".csv":
					problems = ValidateCSV(bytes.NewReader(out[n]))
				}
				for _, p := range problems {
					t.Errorf("%s: the validator rejects our own output: %s", n, p)
				}
			}
			if c.passes != nil {
				got := res.Passes[0].PassCounts()
				for id, n := range c.passes {
					if got[id] != n {
						t.Errorf("dispatch %d: pass count %d, want %d (all: %v)", id, got[id], n, got)
					}
				}
			}
			if c.dirs > 0 && len(res.Passes) != c.dirs {
				t.Errorf("%d application replay passes, want %d", len(res.Passes), c.dirs)
			}
		})
	}
}
