package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/replayspec/replayspec/cuda"
	"github.com/replayspec/replayspec/hsa"
)

// ncuSet is what one Nsight Compute run of -ncu-target left in a folder:
// NAME.csv (--csv --page raw), NAME.log (its ==PROF== lines) and NAME.app
// (the target's own output: the profiled launch as the application saw
// it).
type ncuSet struct {
	name    string
	metrics []string
	values  map[string]float64
	passes  int
	appMs   float64

	oursExtra time.Duration // our per-extra-pass figure for the set
}

var (
	passesRe = regexp.MustCompile(`(\d+) pass(es)?`)
	appRe    = regexp.MustCompile(`profiled launch ([0-9.]+) ms`)
)

// readNCU reads every NAME.csv in dir.
func readNCU(dir string) ([]ncuSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Nsight Compute CSV in %s", dir)
	}
	sort.Strings(files)
	var sets []ncuSet
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".csv")
		s := ncuSet{name: name, values: map[string]float64{}}
		if err := s.readCSV(f); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, file := range []string{name + ".log", name + ".csv"} {
			log, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(log), "\n") {
				if strings.Contains(line, "==PROF==") && strings.Contains(line, "100%") {
					if m := passesRe.FindStringSubmatch(line); m != nil {
						s.passes, _ = strconv.Atoi(m[1])
					}
				}
			}
		}
		if s.passes == 0 {
			s.passes = int(s.values["profiler__replayer_passes"])
		}
		if app, err := os.ReadFile(filepath.Join(dir, name+".app")); err == nil {
			if m := appRe.FindStringSubmatch(string(app)); m != nil {
				s.appMs, _ = strconv.ParseFloat(m[1], 64)
			}
		}
		sets = append(sets, s)
	}
	return sets, nil
}

// readCSV takes the metric columns (names with "__") of the first kernel
// row; the row after the header holds units.
func (s *ncuSet) readCSV(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var lines []string
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, `"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) < 3 {
		return fmt.Errorf("%d CSV lines, want header, units and a row", len(lines))
	}
	r := csv.NewReader(strings.NewReader(strings.Join(lines[:3], "\n")))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return err
	}
	head, row := recs[0], recs[2]
	for i, h := range head {
		if !strings.Contains(h, "__") || i >= len(row) {
			continue
		}
		s.metrics = append(s.metrics, h)
		if v, err := strconv.ParseFloat(strings.ReplaceAll(row[i], ",", ""), 64); err == nil {
			s.values[h] = v
		}
	}
	return nil
}

// crossCheck are metrics that do not depend on timing or cache state:
// instructions, launches, bytes the kernel asks for.
var crossCheck = []string{
	"smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "sm__ctas_launched.sum",
	"smsp__warps_launched.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	// Cache and time: equal only when the caches are flushed as ncu does
	// (docs/cuda.md); printed, not checked, here.
	"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
	"gpu__time_duration.sum", "sm__cycles_elapsed.avg",
}

// counterBench replays the ncu target's kernel (increment over 1% of a
// buffer of size bytes) under our engine with each Nsight Compute metric
// set and compares with ncu's run: (a) every metric CUPTI knows, in the
// passes CUPTI schedules (user replay: we run the passes and restore
// memory); (b) the replay engine's way, one single-pass group a pass, for
// the metrics that fit one pass alone.
func (b *bench) counterBench(t *table, dir string, size uint64, reps int) error {
	if ok, why := b.rt.CountersAvailable(); !ok {
		return fmt.Errorf("counters: %v", why)
	}
	sets, err := readNCU(dir)
	if err != nil {
		return err
	}
	a, err := b.alloc(size)
	if err != nil {
		return err
	}
	defer b.rt.Free(a)
	const fill = 7
	if err := b.fillPattern(a, fill); err != nil {
		return err
	}
	grid := uint32(size / 4 / 100)
	var one *ncuSet
	for i := range sets {
		if sets[i].name == "one" {
			one = &sets[i]
		}
	}
	for i := range sets {
		s := &sets[i]
		if err := b.counterSet(t, s, a, size, grid, fill, reps); err != nil {
			t.row(fmt.Sprintf("  ncu `%s` set", s.name), "error: "+short(err.Error()), "", "")
			fmt.Fprintf(os.Stderr, "cudabench: set %s: %v\n", s.name, err)
			b.failed = true
			if err := b.fillPattern(a, fill); err != nil {
				return err
			}
			continue
		}
		// Per extra pass, ncu: (its set − its one-metric run) / the passes added.
		if one != nil && s != one && s.passes > one.passes && s.appMs > 0 && one.appMs > 0 && s.oursExtra > 0 {
			ncuExtra := time.Duration((s.appMs - one.appMs) / float64(s.passes-one.passes) * 1e6)
			t.row(fmt.Sprintf("  **per extra pass, `%s`: ncu (%d passes − %d) vs ours (engine groups)**", s.name, s.passes, one.passes),
				fmt.Sprintf("**ncu %s, ours %s: %.1f×**", dur(ncuExtra), dur(s.oursExtra), ncuExtra.Seconds()/s.oursExtra.Seconds()), "", "≥ 17×")
		}
	}
	return nil
}

// deviceLevel: NVLink, C2C and PCIe metrics are counted per device, and
// CUPTI 13.0 does not combine them with the per-context rest in one
// configuration; Triage metrics belong to PM sampling.
func deviceLevel(m string) bool {
	for _, p := range []string{"nvlink__", "nvlrx__", "nvltx__", "c2clink__", "pcie__"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return strings.Contains(m, "Triage")
}

func short(msg string) string {
	if len(msg) > 300 {
		return msg[:150] + " … " + msg[len(msg)-150:]
	}
	return msg
}

func (b *bench) counterSet(t *table, s *ncuSet, a hsa.Allocation, size uint64, grid uint32, fill int32, reps int) error {
	began := time.Now()
	var have, single, unknown, device []string
	for _, m := range s.metrics {
		if deviceLevel(m) {
			device = append(device, m)
			continue
		}
		switch n := b.rt.CounterAlonePasses(m); {
		case n == 0:
			unknown = append(unknown, m)
		case n == 1:
			have, single = append(have, m), append(single, m)
		default:
			have = append(have, m)
		}
	}
	groups, err := b.rt.CounterGroups(single)
	if err != nil {
		return fmt.Errorf("groups: %w", err)
	}
	cuptiPasses, err := b.rt.CounterPasses(have)
	if err != nil {
		return fmt.Errorf("CUPTI's schedule of %d metrics: %w", len(have), err)
	}
	planned := time.Since(began)
	t.row(fmt.Sprintf("**ncu `%s` set**: %d metrics; %d known to CUPTI (%d fit one pass alone); %d device-level or PM-sampling, left out; %d ncu-only (e.g. %s)",
		s.name, len(s.metrics), len(have), len(single), len(device), len(unknown), strings.Join(unknown[:min(3, len(unknown))], " ")),
		fmt.Sprintf("ncu %d passes; CUPTI's schedule %d; our single-pass groups %d", s.passes, cuptiPasses, len(groups)), "", "")
	t.row("  checking and grouping the metrics (CUPTI host API, once per set)", dur(planned), "", "")
	per := func(d time.Duration, n int) time.Duration { return d / time.Duration(max(n, 1)) }

	// (b) the engine's groups, one a pass: the passes CUPTI schedules for
	// the single-pass metrics, learned once (Groups), then each replayed
	// dispatch collects group i in pass i.
	var grouped, first samples
	for i := range 1 + reps {
		g, _, err := b.profiledReplay(a, grid, groups)
		if err != nil {
			t.row("  ours, engine groups", "FAILED: "+short(err.Error()), "", "")
			fmt.Fprintf(os.Stderr, "cudabench: set %s, engine groups: %v\n", s.name, err)
			b.failed = true
			grouped = nil
			if err := b.fillPattern(a, fill); err != nil {
				return err
			}
			break
		}
		if err := b.checkAndRefill(a, size, grid, fill); err != nil {
			return fmt.Errorf("groups: memory after replay: %w", err)
		}
		if i >= 1 {
			grouped = append(grouped, g)
		}
	}
	if grouped != nil {
		t.row(fmt.Sprintf("  ours, engine groups: snapshot + %d passes, %d metrics, per pass (host wall-clock)", len(groups), len(single)),
			dur(per(grouped.median(), len(groups))), dur(per(grouped.min(), len(groups))), "")
		t.row("  CUPTI calls of the engine groups (calls, mean)", b.rt.CounterCallTimes(), "", "")
	}
	// The same dispatch with one pass: group 0 as a configuration of its
	// own (a list Groups did not make), dispatch after dispatch; what the
	// extra passes add is the difference. (Running group 0 of the set
	// alone would leave CUPTI's sequence unfinished for the next dispatch,
	// which then runs the passes left first.)
	alone := slices.Clone(groups[0])
	slices.Reverse(alone)
	for i := range 1 + reps {
		if len(groups) < 2 || grouped == nil {
			break
		}
		one, _, err := b.profiledReplay(a, grid, [][]string{alone})
		if err != nil {
			t.row("  ours, one pass (group 0 alone)", "not run: "+short(err.Error()), "", "")
			first = nil
			if err := b.fillPattern(a, fill); err != nil {
				return err
			}
			break
		}
		if err := b.checkAndRefill(a, size, grid, fill); err != nil {
			return fmt.Errorf("group 0 alone: memory after replay: %w", err)
		}
		if i >= 1 {
			first = append(first, one)
		}
	}
	if len(first) > 0 {
		extra := (grouped.median() - first.median()) / time.Duration(len(groups)-1)
		t.row("  ours, the same dispatch with one pass (group 0 as its own configuration)", dur(first.median()), dur(first.min()), "")
		t.row(fmt.Sprintf("  **ours, engine groups: per extra pass** ((%d passes − 1 pass) / %d)", len(groups), len(groups)-1),
			"**"+dur(extra)+"**", "", "≤ 5 ms")
		s.oursExtra = extra
		t.row("  CUPTI calls of the one-pass dispatches (calls, mean)", b.rt.CounterCallTimes(), "", "")
	}

	// (a) every metric, in the passes CUPTI schedules.
	var sched samples
	var values map[string]float64
	var ran int
	for i := range 1 + reps {
		d, v, n, err := b.cuptiReplay(a, grid, have)
		if err != nil {
			return fmt.Errorf("CUPTI schedule: %w", err)
		}
		if err := b.checkAndRefill(a, size, grid, fill); err != nil {
			return fmt.Errorf("CUPTI schedule: memory after replay: %w", err)
		}
		if i >= 1 {
			sched = append(sched, d)
		}
		values, ran = v, n
	}
	t.row(fmt.Sprintf("  ours, CUPTI's schedule: snapshot + %d passes, %d metrics, total (host wall-clock)", ran, len(have)), dur(sched.median()), dur(sched.min()), "")
	t.row("  **ours, CUPTI's schedule: per pass**", "**"+dur(per(sched.median(), ran))+"**", dur(per(sched.min(), ran)), "")
	t.row("  CUPTI calls of CUPTI's schedule (calls, mean)", b.rt.CounterCallTimes(), "", "")

	// The same passes without counters.
	var plain samples
	for i := range 1 + reps {
		p, _, err := b.profiledReplay(a, grid, make([][]string, ran))
		if err != nil {
			return err
		}
		if err := b.checkAndRefill(a, size, grid, fill); err != nil {
			return fmt.Errorf("memory after replay without counters: %w", err)
		}
		if i >= 1 {
			plain = append(plain, p)
		}
	}
	t.row(fmt.Sprintf("  ours without counters, %d passes, per pass", ran), dur(per(plain.median(), ran)), dur(per(plain.min(), ran)), "")
	if s.appMs > 0 && s.passes > 0 {
		ncu := time.Duration(s.appMs * 1e6)
		t.row(fmt.Sprintf("  ncu --replay-mode kernel --set %s: the profiled launch as the application saw it (%d passes)", s.name, s.passes), dur(ncu), "", "")
		t.row("  ncu per pass", dur(per(ncu, s.passes)), "", "")
		t.row("  **ncu / ours, per pass** (CUPTI's schedule)", fmt.Sprintf("**%.1f×**", per(ncu, s.passes).Seconds()/per(sched.median(), ran).Seconds()), "", "")
		t.row("  ncu / ours, whole profiled dispatch", fmt.Sprintf("%.1f×", ncu.Seconds()/sched.median().Seconds()), "", "")
	}
	t.row("  memory after every replay", "ok: one increment on the written 1%, the rest untouched", "", "ok")
	for _, m := range crossCheck {
		nv, inNCU := s.values[m]
		ov, inOurs := values[m]
		if !inNCU || !inOurs {
			continue
		}
		t.row(fmt.Sprintf("  `%s`: ours vs ncu", m), fmt.Sprintf("%.0f vs %.0f", ov, nv), "", "equal")
	}
	return nil
}

func (b *bench) checkAndRefill(a hsa.Allocation, size uint64, grid uint32, fill int32) error {
	if err := b.checkOneRun(a, size/4, uint64(grid), fill); err != nil {
		return err
	}
	return b.fillPattern(a, fill)
}

// cuptiReplay is one replayed dispatch with every metric in the passes
// CUPTI schedules: snapshot, then pass i runs the kernel after a restore
// (none before the first).
func (b *bench) cuptiReplay(a hsa.Allocation, grid uint32, metrics []string) (time.Duration, map[string]float64, int, error) {
	b.rt.SetRestoreMode(cuda.RestoreLearned)
	began := time.Now()
	snap, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
	if err != nil {
		return 0, nil, 0, err
	}
	defer snap.Release()
	vals, n, err := b.rt.ReplayMetrics(metrics, func(i int) error {
		if i > 0 {
			_, err := snap.Restore()
			return err
		}
		return nil
	}, func(int) error { return b.launch("increment", grid, arg(a)) })
	return time.Since(began), vals, n, err
}

// profiledReplay is one replayed dispatch: snapshot, pass i collects
// groups[i] (nil: no counters), restore before every pass but the first.
// It returns the host wall-clock time and the counter values.
func (b *bench) profiledReplay(a hsa.Allocation, grid uint32, groups [][]string) (time.Duration, map[string]uint64, error) {
	b.rt.SetRestoreMode(cuda.RestoreLearned)
	vals := map[string]uint64{}
	began := time.Now()
	snap, err := b.rt.Snapshot(0, a.Agent, []hsa.Allocation{a})
	if err != nil {
		return 0, nil, err
	}
	defer snap.Release()
	for i, g := range groups {
		if i > 0 {
			if _, err := snap.Restore(); err != nil {
				return 0, nil, err
			}
		}
		p := hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment", Grid: hsa.Dim3{X: grid}, Workgroup: hsa.Dim3{X: 256}, Args: []hsa.Arg{arg(a)}}
		if g != nil {
			p.Profile = &hsa.Profile{Counters: g}
		}
		if err := b.q.Submit(1, p); err != nil {
			return 0, nil, err
		}
		if p.Profile != nil {
			for k, v := range p.Profile.Values {
				vals[k] = v
			}
		}
	}
	return time.Since(began), vals, nil
}

// ncuTarget is -ncu-target: the program Nsight Compute profiles. It fills a
// buffer, launches increment over its first 1% once, timed as the
// application sees it, and checks that the buffer holds one run's result.
func ncuTarget(rt *cuda.Runtime, size uint64) error {
	b, err := newBench(rt)
	if err != nil {
		return err
	}
	a, err := b.alloc(size)
	if err != nil {
		return err
	}
	const fill = 7
	if err := b.fillPattern(a, fill); err != nil {
		return err
	}
	grid := uint32(size / 4 / 100)
	d, err := wall(func() error { return b.launch("increment", grid, arg(a)) })
	if err != nil {
		return err
	}
	if err := b.checkOneRun(a, size/4, uint64(grid), fill); err != nil {
		return err
	}
	fmt.Printf("ncu-target: profiled launch %.3f ms; memory ok (one increment)\n", d.Seconds()*1e3)
	return nil
}

// checkOneRun: the first grid elements hold fill+1 (one run of increment),
// the next 1024 and the last 1024 hold fill.
func (b *bench) checkOneRun(a hsa.Allocation, elems, grid uint64, fill int32) error {
	head, err := b.download(a, 0, grid+1024)
	if err != nil {
		return err
	}
	tail, err := b.download(a, elems-1024, 1024)
	if err != nil {
		return err
	}
	for i, v := range head {
		want := fill
		if uint64(i) < grid {
			want = fill + 1
		}
		if v != want {
			return fmt.Errorf("element %d = %d, want %d", i, v, want)
		}
	}
	for i, v := range tail {
		if v != fill {
			return fmt.Errorf("element %d = %d, want %d", elems-1024+uint64(i), v, fill)
		}
	}
	return nil
}
