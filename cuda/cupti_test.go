package cuda

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// The parameter structs must match CUPTI's C layout: these are the offsets
// of the public headers (CUDA 12.6+) on 64-bit targets.
func TestCUPTIParamLayouts(t *testing.T) {
	cases := []struct {
		name      string
		got, want uintptr
	}{
		{"ChipName.pChipName", unsafe.Offsetof(pChipName{}.chipName), 24},
		{"CounterAvailability.pCounterAvailabilityImage", unsafe.Offsetof(pCounterAvailability{}.image), 32},
		{"HostInitialize.pChipName", unsafe.Offsetof(pHostInitialize{}.chipName), 24},
		{"HostInitialize.pHostObject", unsafe.Offsetof(pHostInitialize{}.host), 40},
		{"ConfigAddMetrics.numMetrics", unsafe.Offsetof(pConfigAddMetrics{}.numMetrics), 32},
		{"ConfigImage.pConfigImage", unsafe.Offsetof(pConfigImage{}.image), 32},
		{"NumOfPasses.numOfPasses", unsafe.Offsetof(pNumOfPasses{}.passes), 32},
		{"Evaluate.pMetricValues", unsafe.Offsetof(pEvaluate{}.values), 64},
		{"Enable.pRangeProfilerObject", unsafe.Offsetof(pRPEnable{}.object), 24},
		{"Stop.isAllPassSubmitted", unsafe.Offsetof(pRPStop{}.allPassSubmitted), 40},
		{"PushRange.pRangeName", unsafe.Offsetof(pRPPushRange{}.name), 24},
		{"DecodeData.numOfRangeDropped", unsafe.Offsetof(pRPDecode{}.dropped), 24},
		{"GetCounterDataSize.maxNumRangeTreeNodes", unsafe.Offsetof(pRPCounterDataSize{}.maxNodes), 48},
		{"GetCounterDataSize.counterDataSize", unsafe.Offsetof(pRPCounterDataSize{}.size), 56},
		{"CounterDataInit.pCounterData", unsafe.Offsetof(pRPCounterDataInit{}.data), 32},
		{"SetConfig.range", unsafe.Offsetof(pRPSetConfig{}.rangeMode), 56},
		{"SetConfig.replayMode", unsafe.Offsetof(pRPSetConfig{}.replayMode), 60},
		{"SetConfig.maxRangesPerPass", unsafe.Offsetof(pRPSetConfig{}.maxRangesPerPass), 64},
		{"SetConfig.minNestingLevel", unsafe.Offsetof(pRPSetConfig{}.minNestingLevel), 74},
		{"SetConfig.passIndex", unsafe.Offsetof(pRPSetConfig{}.passIndex), 80},
		{"SetConfig.targetNestingLevel", unsafe.Offsetof(pRPSetConfig{}.targetNestingLevel), 88},
		{"CounterDataInfo.numTotalRanges", unsafe.Offsetof(pRPCounterDataInfo{}.ranges), 32},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s at %d, want %d", c.name, c.got, c.want)
		}
	}
	p := sized(&pRPStop{}, end(unsafe.Offsetof(pRPStop{}.allPassSubmitted), 1))
	if p.structSize != 41 {
		t.Errorf("Stop structSize %d, want 41", p.structSize)
	}
}

// capacity builds a passesOf where each metric costs its length in
// counters and one pass holds 10; unknown names fail.
func capacity(calls *int) func([]string) (int, error) {
	return func(ms []string) (int, error) {
		*calls++
		n := 0
		for _, m := range ms {
			if strings.HasPrefix(m, "bad") {
				return 0, errors.New("invalid metric")
			}
			n += len(m)
		}
		return (n + 9) / 10, nil
	}
}

// fakeCUPTI is a profiler whose configurations follow capacity and whose
// calibration packs the metrics into passes of 10 in reverse order (as a
// scheduler may): the groups must follow the calibration, not the order
// of the request.
func fakeCUPTI(calls, calibrations *int) *profiler {
	p := newProfilerState()
	p.chip = "GH100"
	p.passesOf = capacity(calls)
	p.configure = func(ms []string) (*metricSet, error) {
		n, err := p.passesOf(ms)
		if err != nil {
			return nil, err
		}
		return &metricSet{metrics: slices.Clone(ms), passes: n}, nil
	}
	p.calibrate = func(s *metricSet) ([][]string, error) {
		*calibrations++
		groups := make([][]string, s.passes)
		pass, room := 0, 10
		for i := len(s.metrics) - 1; i >= 0; i-- {
			m := s.metrics[i]
			if len(m) > room {
				pass, room = pass+1, 10
			}
			groups[pass] = append(groups[pass], m)
			room -= len(m)
		}
		for _, g := range groups {
			slices.Reverse(g)
		}
		return groups, nil
	}
	return p
}

func TestProfilerGroupsFollowCUPTIPasses(t *testing.T) {
	calls, cals := 0, 0
	p := fakeCUPTI(&calls, &cals)
	list := []string{"aaaa", "bbbb", "cc", "ddddd", "eeeee", "f"}
	g, err := p.Groups(list)
	if err != nil {
		t.Fatal(err)
	}
	// 21 counters: 3 passes; the fake scheduler fills from the end, and
	// each group keeps the request's order.
	if want := "[[eeeee f] [cc ddddd] [aaaa bbbb]]"; fmt.Sprint(g) != want {
		t.Fatalf("groups %v, want %s", g, want)
	}
	before := calls
	g[0][0] = "changed"
	if g2, _ := p.Groups(list); calls != before || cals != 1 || g2[0][0] == "changed" {
		t.Errorf("second call not served from the cache unchanged: %v (%d calls, %d calibrations)", g2, calls-before, cals)
	}
	// Each group resolves to its pass of the set, which is in use.
	g, _ = p.Groups(list)
	for i, grp := range g {
		s, pass, err := p.resolve(grp, nil)
		if err != nil || pass != i || s.passes != 3 {
			t.Errorf("group %d %v resolves to pass %d of %v: %v", i, grp, pass, s, err)
		}
	}
	// A list of its own that fits one pass is a set of one pass.
	if s, pass, err := p.resolve([]string{"xy", "z"}, nil); err != nil || pass != 0 || s.passes != 1 {
		t.Errorf("single-pass list: %v %d %v", s, pass, err)
	}
	if _, _, err := p.resolve([]string{"abcdefgh", "ijklmnop"}, nil); err == nil || !strings.Contains(err.Error(), "need 2 passes") {
		t.Errorf("two-pass list not from Groups: %v", err)
	}
	if g, err := p.Groups([]string{"xy", "z"}); err != nil || len(g) != 1 || cals != 1 {
		t.Errorf("one pass needs no calibration: %v %v (%d)", g, err, cals)
	}
	if _, err := p.Groups([]string{"aaaa", "bad_one"}); err == nil || !strings.Contains(err.Error(), `"bad_one"`) {
		t.Errorf("unknown metric: %v", err)
	}
	if _, err := p.Groups([]string{"a", "twelve_chars"}); err == nil || !strings.Contains(err.Error(), "needs 2 passes by itself") {
		t.Errorf("oversized metric: %v", err)
	}
	if !p.HasCounter("xyz") || p.HasCounter("bad") {
		t.Error("HasCounter")
	}
	if !strings.Contains(p.Describe(), "GH100") {
		t.Error(p.Describe())
	}
}

// A calibration that leaves a pass without a metric of its own, or a
// metric in no pass, is refused: pass i must collect group i.
func TestProfilerRefusesABadCalibration(t *testing.T) {
	calls, cals := 0, 0
	p := fakeCUPTI(&calls, &cals)
	p.calibrate = func(s *metricSet) ([][]string, error) {
		return [][]string{{"aaaaaaaa"}, nil}, nil
	}
	if _, err := p.Groups([]string{"aaaaaaaa", "bbbbbbbb"}); err == nil || !strings.Contains(err.Error(), "pass 1 of 2 completes no metric") {
		t.Errorf("empty pass: %v", err)
	}
	p = fakeCUPTI(&calls, &cals)
	p.calibrate = func(s *metricSet) ([][]string, error) {
		return [][]string{{"aaaaaaaa"}, {"cccccccc"}}, nil
	}
	if _, err := p.Groups([]string{"aaaaaaaa", "bbbbbbbb"}); err == nil || !strings.Contains(err.Error(), "no pass completes bbbbbbbb") {
		t.Errorf("metric left out: %v", err)
	}
	p = fakeCUPTI(&calls, &cals)
	p.calibrate = nil
	if _, err := p.Groups([]string{"aaaaaaaa", "bbbbbbbb"}); err == nil || !strings.Contains(err.Error(), "need 2 passes") {
		t.Errorf("no device: %v", err)
	}
}

func TestLoadCUPTINamesWhatWasTried(t *testing.T) {
	t.Setenv("REPLAYSPEC_CUPTI", "/opt/x/libcupti.so.99")
	var tried []string
	_, err := loadCUPTI(func(name string) (library, error) {
		tried = append(tried, name)
		if strings.HasSuffix(name, "libcupti.so.12") {
			return fakeLibrary{"cuptiGetResultString": 1}, nil // too old: no range profiler
		}
		return nil, errors.New("not found")
	})
	if err == nil || !strings.HasPrefix(err.Error(), "no CUPTI profiler found: ") ||
		!strings.Contains(err.Error(), "/opt/x/libcupti.so.99") || !strings.Contains(err.Error(), "lacks cuptiProfilerInitialize") {
		t.Fatalf("err = %v", err)
	}
	if tried[0] != "/opt/x/libnvperf_host.so" || tried[2] != "/opt/x/libcupti.so.99" {
		t.Errorf("tried %v", tried[:3])
	}
}

func TestIntegralRounds(t *testing.T) {
	got, err := integral(map[string]float64{"a": 2.5, "b": -1e-9, "c": 1e6 + 0.4})
	if err != nil || got["a"] != 3 || got["b"] != 0 || got["c"] != 1000000 {
		t.Errorf("%v %v", got, err)
	}
}

// NaN is never a count of 0 (issues 20 and 22): CUPTI's NaN for a metric it
// did not collect, an infinity or a negative value is an error naming the
// metric.
func TestIntegralRefusesNaN(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -3} {
		got, err := integral(map[string]float64{"ok": 4, "smsp__inst_executed.sum": v})
		if err == nil || got != nil || !strings.Contains(err.Error(), "smsp__inst_executed.sum = ") || !strings.Contains(err.Error(), "not a count") {
			t.Errorf("%v: %v %v", v, got, err)
		}
	}
}

func TestNCUValuesParsesRawCSV(t *testing.T) {
	out := []byte("==PROF== Connected to process 1\n" +
		`"ID","Process ID","Kernel Name","sm__ctas_launched.sum","smsp__inst_executed.sum"` + "\n" +
		`"","","","block","inst"` + "\n" +
		`"0","42","increment","16,384","1234567"` + "\n")
	v, err := ncuValues(out)
	if err != nil || v["sm__ctas_launched.sum"] != 16384 || v["smsp__inst_executed.sum"] != 1234567 {
		t.Fatalf("%v %v", v, err)
	}
	if _, err := ncuValues([]byte("no csv")); err == nil {
		t.Error("no CSV accepted")
	}
}
