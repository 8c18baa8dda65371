package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/exec"
	"github.com/replayspec/replayspec/trace"
)

func init() {
	register(command{name: "run", summary: "run specs on a target and check every rule", run: runCmd})
}

var runHelp = help{
	name:     "run",
	synopsis: "[options] [SPEC|DIR...]",
	about: `Runs each spec (a YAML file, or every *.yaml file of a directory; with none,
the built-in library) on a target, checks the trace against every rule oracle
and the spec's own expectations, and reports each spec on stdout as it
finishes: an interrupted or killed run keeps what it did. A directory's
sub-directories are not read.

--gen N also runs N specs drawn by the spec generator, within what the target
claims, named gen-SEED: seeds S, S+1, ... from --gen-seed S (default 1, or
random), so the same target and seed give the same specs. A port (an exec:
target) gets 50 by default, so it meets what the reference engine meets
beyond the library; --gen 0 leaves them out. The reports state the seeds, and
each generated spec's record the one command that runs it again.

--trace-out FILE writes the NDJSON trace: with one spec to FILE (or into FILE/
when FILE is a directory), with several specs one FILE/NAME.ndjson per spec, FILE
being created as a directory. A failing run still writes its whole trace.
--timeline FILE writes a Chrome trace-event JSON of every spec; open it in
https://ui.perfetto.dev or chrome://tracing. No output may be an input (a spec,
the --xfail list, a golden) or another output: such a run is refused before
it starts.

Ctrl-C or SIGTERM stops the run: drivers are ended, what finished is written,
and the exit status is 130 (SIGINT) or 143 (SIGTERM).`,
	examples: []string{
		"replayspec run                                        # the built-in library",
		"replayspec run specs/",
		"replayspec run -run 'counters|converge' -v specs/",
		"replayspec run --rule PC-3,CMP specs/",
		"replayspec run --trace-out out/fixed.ndjson --timeline out/fixed.json specs/fixed-three-passes.yaml",
		"replayspec run --format junit --shard 2/4 specs/ > report.xml",
		"replayspec run --format json specs/ | tee results.json    # one JSON object a line, as each spec finishes",
		"replayspec run -count 20 --fail-fast specs/concurrent-same-agent-waits.yaml   # hunt a flake",
		"replayspec run --last-failed specs/",
		"replayspec run --golden my-goldens --update my-specs/ # then without --update in CI",
		"replayspec run --fault completion_every_pass specs/fixed-three-passes.yaml   # watch the oracles catch it",
		"replayspec run --target exec:./my-driver --gen 200 --gen-seed random   # a port: the library and 200 generated specs",
	},
}

// runFlags are run's options, parsed.
type runFlags struct {
	target, format, traceOut, timeline, shard, faults, xfail, matrix string
	nameRE, rules, color, golden, html                               string
	maxPasses                                                        uint64
	timeout, grace                                                   time.Duration
	quiet, verbose, failFast, lastFailed, update                     bool
	count                                                            int
	memoryMiB, maxInputMiB, maxCases, maxRuns                        int64
	traceBudget                                                      traceBudget
	ci                                                               *ciFlags
	gen                                                              int
	genSeed                                                          string
	args                                                             []string // as given, for the HTML page
}

func runCmd(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	var f runFlags
	fs := newFlags(runHelp.name)
	fs.StringVar(&f.target, "target", "sim", "where to run: sim (the reference engine on the simulator), cuda, rocr, or exec:COMMAND (an external port)")
	fs.StringVar(&f.format, "format", "text", "report format: text, json (a stream of JSON lines) or junit")
	fs.StringVar(&f.traceOut, "trace-out", "", "write the NDJSON trace to `FILE` (one spec) or into directory FILE (several specs)")
	fs.StringVar(&f.timeline, "timeline", "", "write a Chrome trace-event `FILE` (opens in Perfetto)")
	fs.StringVar(&f.shard, "shard", "", "run only shard `k/n` of the specs (1 <= k <= n), for a CI matrix")
	fs.Uint64Var(&f.maxPasses, "max-passes", 0, "pass budget per dispatch, for every spec (`N`; 0 keeps each spec's limits.max_passes)")
	fs.DurationVar(&f.timeout, "timeout", runner.DefaultTimeout, "give up on a spec after this `duration`, loading and judging included, on every target")
	fs.DurationVar(&f.grace, "grace", runner.DefaultGrace, "once --timeout is up, how long a target gets to stop before it is abandoned (`duration`)")
	fs.StringVar(&f.faults, "fault", "", "plant known engine bugs, comma-separated `NAME,...` (sim only; see docs/faults.md)")
	fs.BoolVar(&f.quiet, "quiet", false, "leave passing and skipped specs out of the text report")
	fs.BoolVar(&f.verbose, "v", false, "list, under each spec, every rule judged with its instances")
	fs.StringVar(&f.xfail, "xfail", "", "a port's expected failures: `FILE` of rule IDs or spec names, each with a reason (docs/driver-protocol.md); a listed one that passes is an error")
	fs.StringVar(&f.html, "html", "", "also write the report as one self-contained HTML page to `FILE`: summary, compliance matrix, every spec with its violations and a timeline of each dispatch")
	fs.StringVar(&f.matrix, "matrix", "", "also write the compliance matrix (rule x status) to `FILE` (.json for JSON, else Markdown)")
	fs.StringVar(&f.nameRE, "run", "", "run only the specs whose name matches `REGEXP` (like go test -run)")
	fs.StringVar(&f.rules, "rule", "", "run only the specs that name one of these rules or families, comma-separated (`PC-3,CMP`)")
	fs.BoolVar(&f.failFast, "fail-fast", false, "stop after the first spec that fails or errs")
	fs.IntVar(&f.count, "count", 1, "run every spec `N` times (flake hunting)")
	fs.BoolVar(&f.lastFailed, "last-failed", false, "run only the specs that failed last time in this directory (all, when none did)")
	fs.StringVar(&f.color, "color", "auto", "colour the text report: auto (on a terminal, unless NO_COLOR is set), always or never")
	fs.StringVar(&f.golden, "golden", "", "compare each spec's trace with `DIR`/NAME.ndjson (a difference fails the spec)")
	fs.BoolVar(&f.update, "update", false, "with --golden: write the goldens instead of comparing")
	fs.Int64Var(&f.memoryMiB, "memory-budget", spec.DefaultMemoryBudget>>20, "refuse a spec expected to need more than `MiB` of memory")
	fs.Int64Var(&f.maxInputMiB, "max-input-mib", spec.MaxBytes>>20, "refuse a spec file larger than this many `MiB`")
	f.traceBudget.add(fs)
	fs.Int64Var(&f.maxCases, "max-cases", spec.DefaultMaxCases, "refuse a spec whose matrix stands for more than `N` cases (counted before any is made)")
	fs.Int64Var(&f.maxRuns, "max-runs", runner.DefaultMaxRuns, "refuse a run of more than `N` runs: specs x --count x (1 + --retries), counted before any is made")
	fs.IntVar(&f.gen, "gen", -1, fmt.Sprintf("also run `N` generated specs beside the library, drawn within what the target claims (default %d on an exec: target, a port; 0 elsewhere)", portGenerated))
	fs.StringVar(&f.genSeed, "gen-seed", "1", "the first generated spec's seed `S` (spec i has seed S+i), or random")
	f.ci = addCIFlags(fs) // -j, --retries, --flakes, --baseline, --results, --flakes-out (runci.go)
	paths, code, ok := parseFlags(fs, runHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	f.args = args
	return f.run(ctx, paths, e)
}

func (f runFlags) run(ctx context.Context, paths []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	if err := checkFormat(f.format, formats); err != nil {
		return usageError(stderr, "run", "--format: %v", err)
	}
	var k, n int
	if f.shard != "" {
		var err error
		if k, n, err = parseShard(f.shard); err != nil {
			return usageError(stderr, "run", "--shard %q: %v", f.shard, err)
		}
	}
	if f.timeout <= 0 {
		return usageError(stderr, "run", "--timeout %s: want a positive duration such as 30s or 2m", f.timeout)
	}
	if f.grace <= 0 {
		return usageError(stderr, "run", "--grace %s: want a positive duration such as 2s", f.grace)
	}
	if f.count < 1 {
		return usageError(stderr, "run", "-count %d: want 1 or more", f.count)
	}
	if f.memoryMiB < 1 || f.maxInputMiB < 1 || f.memoryMiB > maxOptionMiB || f.maxInputMiB > maxOptionMiB {
		return usageError(stderr, "run", "--memory-budget %d, --max-input-mib %d: each takes 1 to %d MiB", f.memoryMiB, f.maxInputMiB, maxOptionMiB)
	}
	if err := f.traceBudget.check(); err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	if f.maxCases < 1 || f.maxRuns < 1 {
		return usageError(stderr, "run", "--max-cases and --max-runs take a positive number")
	}
	// A count or a number of retries that alone is over the run budget is
	// refused before anything is loaded.
	if err := f.runBudget(1); err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	colour, err := colourWanted(f.color, isTerminal(stdout), e.getenv)
	if err != nil {
		return usageError(stderr, "run", "--color: %v", err)
	}
	if f.update && f.golden == "" {
		return usageError(stderr, "run", "--update writes goldens: name their directory with --golden DIR")
	}
	var nameRE *regexp.Regexp
	if f.nameRE != "" {
		if nameRE, err = regexp.Compile(f.nameRE); err != nil {
			return usageError(stderr, "run", "-run %q: %v", f.nameRE, err)
		}
	}
	var xf runner.XFail
	if f.xfail != "" {
		if xf, err = loadXFail(ctx, f.xfail); err != nil {
			return inputError(stderr, "run", fmt.Errorf("--xfail: %w", err), "")
		}
	}
	if err := f.ci.load(ctx); err != nil {
		return inputError(stderr, "run", err, "")
	}
	fset, err := replay.ParseFaults(f.faults)
	if err != nil {
		return usageError(stderr, "run", "--fault: %v", err)
	}
	tg, err := openTarget(f.target, fset, f.traceBudget.mib)
	if err != nil {
		var un *target.Unavailable
		if errors.As(err, &un) {
			fmt.Fprintf(stderr, "replayspec run: target %s is not available on this machine: %s\n", f.target, un.Reason)
			fmt.Fprintln(stderr, "Run on the simulator (--target sim, the default) or on a machine that has it.")
			return exitUsage
		}
		return usageError(stderr, "run", "--target: %v", err)
	}

	gen, err := planGenerated(f.gen, f.genSeed, f.target, f.faults, tg)
	if err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	if gen != nil {
		// Drawn before the library is loaded: count them first.
		if err := f.runBudget(gen.count); err != nil {
			return usageError(stderr, "run", "--gen %d: %v", gen.count, err)
		}
	}

	spec.SetMemoryBudget(uint64(f.memoryMiB) << 20)
	defer spec.SetMemoryBudget(0)
	spec.SetMaxCases(f.maxCases)
	defer spec.SetMaxCases(0)
	specs, loading, err := loadSpecsTimed(ctx, paths, f.maxInputMiB<<20)
	if err != nil {
		return inputError(stderr, "run", err, loadHint(err))
	}
	if gen != nil {
		specs = append(specs, gen.specs()...)
	}
	if f.maxPasses > 0 {
		// The flag replaces each spec's limits.max_passes: what that
		// refuses is said in the flag's words, once per problem.
		flagWords := strings.NewReplacer("the pass budget limits.max_passes", "the pass budget --max-passes",
			"raise limits.max_passes", "raise --max-passes")
		var errs []string
		for i := range specs {
			specs[i].Limits.MaxPasses = f.maxPasses
			if err := spec.Validate(specs[i]); err != nil {
				errs = append(errs, flagWords.Replace(err.Error()))
			}
		}
		if len(errs) > 0 {
			return inputError(stderr, "run", errors.New(strings.Join(errs, "\n")),
				fmt.Sprintf("--max-passes %d replaces every spec's limits.max_passes: raise it, or leave it out to keep each spec's own.", f.maxPasses))
		}
	}
	if f.xfail != "" {
		if err := xf.Check(specNames(specs)); err != nil {
			return inputError(stderr, "run", fmt.Errorf("--xfail: %w", err), "Every line names a rule ID or the name of a spec the run loads.")
		}
	}
	filter := runner.Filter{Name: nameRE}
	if f.rules != "" {
		filter.Rules = splitList(f.rules)
	}
	if f.lastFailed {
		names, found := lastFailed(e)
		if found && len(names) > 0 {
			filter.Names = names
		} else {
			fmt.Fprintln(stderr, "replayspec run: --last-failed: no failures recorded here last time; running every spec")
		}
	}
	selected := runner.Select(specs, filter)
	if len(selected) == 0 {
		return usageError(stderr, "run", "no spec of the %d loaded matches -run %q --rule %q: 'replayspec list' shows their names and rules", len(specs), f.nameRE, f.rules)
	}
	specs = selected
	if f.shard != "" {
		specs, _ = runner.Shard(specs, k, n) // k/n checked above
		if len(specs) == 0 {
			fmt.Fprintf(stderr, "replayspec run: shard %d/%d has no specs\n", k, n)
		}
	}
	if err := f.runBudget(len(specs)); err != nil {
		return usageError(stderr, "run", "%v", err)
	}

	plan := planOutputs(f, specs)
	inputs := specInputs(specs)
	if f.xfail != "" {
		inputs = append(inputs, namedPath{"--xfail", f.xfail})
	}
	inputs = append(inputs, f.ci.inputs()...)
	outputs := append(plan.all(), f.ci.outputs()...)
	if f.html != "" {
		outputs = append(outputs, namedPath{"--html", f.html})
	}
	outs, err := guardOutputs(inputs, outputs)
	if err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	plan.outs = outs
	return f.execute(ctx, tg, xf, specs, loading, plan, colour, gen, e)
}

// runBudget refuses a run of n specs that would make more runs than
// --max-runs allows, saying how the number comes about and what to change.
func (f runFlags) runBudget(n int) error {
	p := runner.Plan{Count: f.count, Retry: runner.Retry{Retries: *f.ci.retries}}
	runs := p.Runs(n)
	if runs <= uint64(f.maxRuns) {
		return nil
	}
	var parts []string
	if n != 1 {
		parts = append(parts, fmt.Sprintf("%d specs", n))
	}
	if f.count != 1 || n == 1 {
		parts = append(parts, fmt.Sprintf("--count %d", f.count))
	}
	if r := *f.ci.retries; r > 0 {
		parts = append(parts, fmt.Sprintf("(1 + --retries %d)", r))
	}
	what := strings.Join(parts, " × ")
	total := fmt.Sprint(runs)
	if runs == math.MaxUint64 {
		total = "more than 2^64"
	}
	return fmt.Errorf("%s = %s runs, over the budget of %d runs: lower --count or --retries, select fewer specs (-run, --rule, --shard), or raise --max-runs",
		what, total, f.maxRuns)
}

func (f runFlags) execute(ctx context.Context, tg target.Target, xf runner.XFail, specs []spec.Spec, loading map[string]time.Duration, plan outputPlan, colour bool, gen *generated, e env) int {
	stdout, stderr := e.stdout, e.stderr
	ropts := report.Options{Target: tg.Name(), Quiet: f.quiet, Verbose: f.verbose, Color: colour, XFailFile: f.xfail,
		TraceFiles: map[string]string{}, Rerun: func(s spec.Spec) string {
			cmd := "replayspec run"
			if f.target != "sim" {
				cmd += " --target " + shellQuote(f.target)
			}
			if f.faults != "" {
				cmd += " --fault " + f.faults
			}
			return cmd + " --trace-out " + fileName(s.Name) + ".ndjson --timeline " + fileName(s.Name) + ".json " + s.File
		}}
	hdr := report.Header{Target: tg.Name(), XFailFile: f.xfail, Cases: len(specs) * f.count, Generated: gen.header()}
	if k, n, err := parseShard(f.shard); err == nil {
		hdr.Shard = fmt.Sprintf("%d/%d", k, n) // merge tells the shards apart by it
	}
	stream, err := report.NewStream(f.format, stdout, hdr, ropts)
	if err != nil {
		return usageError(stderr, "run", "--format: %v", err)
	}
	var tl *report.TimelineWriter
	var tlFile *streamOut
	if f.timeline != "" {
		if tlFile, err = plan.outs.stream(f.timeline); err == nil {
			if special(f.timeline) {
				tl, err = report.NewTimeline(tlFile) // a pipe cannot seek: appended, ended at the end
			} else {
				tl, err = report.NewSealedTimeline(tlFile)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "replayspec run: %v\n", err)
			return exitIO
		}
		defer tlFile.Close()
	}

	var page *report.HTMLPage
	if f.html != "" {
		page = htmlPage(tg, commandLine("run", f.args), f.xfail, f.ci.base)
	}
	var loadingMu sync.Mutex
	csv, csvFile, err := f.ci.openResults(plan.outs)
	if err != nil {
		fmt.Fprintf(stderr, "replayspec run: %v\n", err)
		return exitIO
	}
	defer csvFile.Close()
	prog := newProgress(stderr, len(specs)*f.count > 0 && isTerminal(stderr))
	defer prog.run()()
	opts := runner.Options{Target: tg, Timeout: f.timeout, Grace: f.grace, OnPass: prog.pass, OnJudge: prog.judge,
		// Loading counts too, once: against a spec's first run. Workers
		// (-j) ask at once.
		Spent: func(s spec.Spec) time.Duration {
			loadingMu.Lock()
			defer loadingMu.Unlock()
			d := loading[s.File]
			delete(loading, s.File)
			return d
		}}
	partials := newPartials(tg, plan, tl != nil || page != nil)
	// Nothing asks for the events themselves (a trace file, a golden, the
	// timeline or the HTML page only where the events go to a file as they
	// come, partials): each spec's are judged as they are recorded and not
	// kept (issue 23).
	opts.Stream = partials.streams() && !holdTraces
	var pageErr error // why the page would lack a spec's timelines: it is not written
	pageLost := ""    // what was lost
	var outcomes []runner.Outcome
	var results []runner.Result
	var flakes []runner.Attempted
	var writeErrs outputErrors
	unavailable := ""
	runPlan := runner.Plan{Count: f.count, FailFast: f.failFast, Started: prog.start, Summaries: true,
		Jobs: f.ci.jobsFor(tg), Retry: f.ci.retry(), Record: partials.record(),
		Done: func(i, total int, a runner.Attempted) {
			prog.clear()
			r := a.Result
			spooled, spoolErr := partials.take(r) // its events, when it was judged as it ran
			defer spooled.discard()
			if f.golden != "" {
				if spoolErr != nil {
					writeErrs.add("--golden", plan.goldenLost(r, f.update, spoolErr))
				} else {
					writeErrs.add("--golden", partials.golden(&r, f.update, spooled))
				}
			}
			if file, ok := plan.traces[traceKey(r.Spec.Name, r.Run)]; ok && r.Verdict() != runner.Skip {
				if err := partials.finish(file, r); err != nil {
					writeErrs.add("--trace-out", err)
				} else {
					ropts.TraceFiles[r.Spec.Name] = file
				}
			}
			if tl != nil && spoolErr != nil {
				tlFile.fail(spoolErr) // a timeline without this spec's slices would say it ran none
			}
			if tl != nil && r.Verdict() != runner.Skip && tlFile.Err() == nil {
				events := report.EventsOf(r.Trace)
				if spooled != nil {
					events = spooled.events()
				}
				if err := tl.AddFrom(r, events); err != nil {
					tlFile.fail(err) // a timeline cut inside a spec is no document: removed, and said at the end
				}
			}
			o := xf.Outcome(r)
			if a.Flaky {
				report.FlakeOutcome(&o, a, *f.ci.flakes)
				flakes = append(flakes, a)
			}
			outcomes = append(outcomes, o)
			results = append(results, r)
			rec := report.Record(o, ropts)
			gen.mark(&rec)
			report.Attempts(&rec, a)
			if err := stream.Add(rec); err != nil {
				writeErrs.add("stdout", stdoutError(err))
			}
			if page != nil && pageErr == nil {
				// Its timelines are drawn now, from the spooled copy of
				// its events or the held trace, before they are dropped.
				events := report.EventsOf(r.Trace)
				if spooled != nil {
					events = spooled.events()
				}
				if spoolErr != nil {
					pageErr, pageLost = spoolErr, "the temporary copy of "+report.CaseName(rec)+"'s events failed"
				} else if err := page.AddFrom(rec, events); err != nil {
					pageErr, pageLost = err, "the timelines of "+report.CaseName(rec)+" could not be drawn"
				}
			}
			if csv != nil && csvFile.Err() == nil {
				writeErrs.add("--results", csv.Write(a))
			}
			var un *target.Unavailable
			if errors.As(r.Err, &un) {
				unavailable = un.Reason
			}
			// Everything that reads the events is written by now: what
			// the run keeps of a spec is its summary, not its trace, so a
			// run of many specs holds no more than one trace per worker.
			dropEvents(&outcomes[len(outcomes)-1].Result)
			dropEvents(&results[len(results)-1])
			if a.Flaky {
				last := &flakes[len(flakes)-1]
				dropEvents(&last.Result)
				if last.Failed != nil {
					failed := *last.Failed
					dropEvents(&failed)
					last.Failed = &failed
				}
			}
		}}
	_, stop := runner.RunPlan(ctx, specs, opts, runPlan)
	prog.clear()

	end := report.End{Stopped: string(stop)}
	if sig := interruptedBy(ctx); sig != nil {
		finished, cut := 0, ""
		for _, o := range outcomes {
			if errors.Is(o.Result.Err, runner.ErrInterrupted) {
				cut = "; " + o.Result.Spec.Name + " was stopped part-way (its trace so far is written)"
				continue
			}
			finished++
		}
		end.Stopped = fmt.Sprintf("interrupted by %s: %d of %d specs finished%s", signalName(sig), finished, len(specs)*f.count, cut)
	}
	var stale []runner.StaleEntry
	if f.xfail != "" && end.Stopped == "" {
		stale = xf.Stale(outcomes)
		end.Stale = report.StaleOf(f.xfail, stale)
	}
	if err := stream.End(end); err != nil {
		writeErrs.add("stdout", stdoutError(err))
	}
	if tl != nil {
		writeErrs.add("--timeline", tl.Close())
		writeErrs.add("--timeline", tlFile.Close())
	}
	switch {
	case pageErr != nil:
		writeErrs.add("--html", &outputError{Flag: "--html", Path: f.html, Err: pageErr, Left: pageLost + ", so the page was not written"})
	case page != nil:
		writeErrs.add("--html", writeHTML(plan.outs, f.html, page, end))
	}
	writeErrs.add("--results", csvFile.Close())
	writeErrs.add("--flakes-out", f.ci.writeFlakesOut(plan.outs, flakes))
	if f.matrix != "" {
		writeErrs.add("--matrix", writeMatrix(plan.outs, f.matrix, tg, xf.Apply(results)))
	}
	saveLastFailed(e, outcomes)
	for _, e := range writeErrs.list {
		fmt.Fprintf(stderr, "replayspec run: %s\n", e)
	}
	if end.Stopped != "" && interruptedBy(ctx) != nil {
		fmt.Fprintf(stderr, "replayspec run: %s\n", end.Stopped)
	}
	// Flakes and the baseline decide as deqp-runner would (runci.go); an
	// expected-failure list decides over both.
	code := f.ci.exit(stderr, exitFor(results), results, flakes)
	if f.xfail != "" {
		code = exitOK
		if len(stale) > 0 || runner.Unexpected(outcomes) {
			code = exitFail
		}
	}
	switch {
	case unavailable != "":
		fmt.Fprintf(stderr, "replayspec run: target %s is not available on this machine: %s\n", tg.Name(), unavailable)
		return exitUsage
	case writeErrs.io:
		return exitIO
	case writeErrs.any():
		return exitUsage
	case interruptedBy(ctx) != nil:
		return exitFail
	}
	return code
}

// key names one run of a spec among several (-count).
// traceKey is how outputPlan.traces names a run of a spec: its name, and
// "#N" for run N of several (--count).
func traceKey(name string, run int) string {
	if run > 0 {
		return name + "#" + strconv.Itoa(run)
	}
	return name
}

// parseShard reads "k/n".
func parseShard(s string) (k, n int, err error) {
	a, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, fmt.Errorf("want k/n, e.g. 1/4")
	}
	k, errK := strconv.Atoi(strings.TrimSpace(a))
	n, errN := strconv.Atoi(strings.TrimSpace(b))
	if errK != nil || errN != nil {
		return 0, 0, fmt.Errorf("want two whole numbers k/n, e.g. 1/4")
	}
	if n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("want 1 <= k <= n, e.g. 1/4")
	}
	return k, n, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func specNames(specs []spec.Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// holdTraces makes run hold every spec's trace, as every run did before
// issue 23: the reference the tests hold the streamed outputs to.
var holdTraces bool

// dropEvents forgets a finished spec's events, keeping the trace's header
// (the matrix reads its sources).
func dropEvents(r *runner.Result) { r.Trace.Events = nil }

func writeTrace(outs *outputSet, path string, t trace.Trace) error {
	return outs.write(path, func(w io.Writer) error { return trace.Write(w, t) })
}

// stdoutError is a report that could not be written to stdout.
func stdoutError(err error) error {
	return &outputError{Flag: "the report on", Path: "stdout", Err: err, Left: "the report is cut short"}
}

// writeMatrix writes the compliance matrix of a run, as JSON when the file
// name ends in .json, else as Markdown.
func writeMatrix(outs *outputSet, path string, tg target.Target, outcomes []runner.Outcome) error {
	var families []string
	if e, ok := tg.(*exectarget.Exec); ok {
		families = e.Families()
	}
	m := report.BuildMatrix(outcomes, families)
	m.Target = tg.Name()
	return outs.write(path, func(w io.Writer) error {
		if strings.HasSuffix(path, ".json") {
			return m.WriteJSON(w)
		}
		return m.WriteMarkdown(w)
	})
}

// progress is the line rewritten in place on a terminal's stderr: the
// spec running now, what it is doing (its passes so far, or judging) and
// its time, redrawn every progressTick even when nothing happens, so that
// it never looks frozen.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	i, n    int
	name    string
	phase   string // "starting", "pass N", "judging"
	started time.Time
	last    time.Time
	stop    chan struct{}
}

// progressTick is how often the line is redrawn.
const progressTick = 250 * time.Millisecond

func newProgress(w io.Writer, on bool) *progress { return &progress{w: w, on: on} }

// run redraws the line every progressTick until clear's last call (done).
func (p *progress) run() (done func()) {
	if !p.on {
		return func() {}
	}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.tick()
			case <-stop:
				return
			}
		}
	}()
	return func() { close(stop) }
}

func (p *progress) start(i, total int, s spec.Spec) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.i, p.n, p.name, p.phase, p.started = i+1, total, s.Name, "starting", time.Now()
	p.drawLocked(time.Now())
}

func (p *progress) pass(s spec.Spec, passes int) {
	p.set(fmt.Sprintf("pass %d", passes), false)
}

func (p *progress) judge(s spec.Spec) { p.set("judging", true) }

// set changes the phase; the line is redrawn at most every 100 ms, or at
// once when now.
func (p *progress) set(phase string, now bool) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase = phase
	if t := time.Now(); now || t.Sub(p.last) >= 100*time.Millisecond {
		p.drawLocked(t)
	}
}

// tick redraws the line with the time so far.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.name != "" {
		p.drawLocked(time.Now())
	}
}

func (p *progress) drawLocked(now time.Time) {
	p.last = now
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s: %s (%.1f s)", p.i, p.n, report.Name(p.name), p.phase, now.Sub(p.started).Seconds())
}

func (p *progress) clear() {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name = ""
	fmt.Fprint(p.w, "\r\033[K")
}

// colourWanted decides the text report's colour: auto colours a terminal
// unless NO_COLOR is set to anything (no-color.org) or TERM is dumb.
func colourWanted(mode string, terminal bool, getenv func(string) string) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		return terminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb", nil
	}
	return false, fmt.Errorf("%q: use auto, always or never", mode)
}
