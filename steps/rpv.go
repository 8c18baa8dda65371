package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/rocprof"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Steps of rpv.feature: the rocprofv3 front end (package rocprof), run on
// the scenario's machine and application as `replayspec prof` runs it.

type profRun struct {
	warnings []string
	err      error
	res      *rocprof.Result
	files    map[string][]byte
}

type profKey struct{}

func registerRPV(sc *godog.ScenarioContext) {
	step(sc, `^the user runs rocprofv3 with "([^"]*)"$`, runProf)
	step(sc, `^rocprofv3 refuses with a diagnostic for (RPV-\d+) mentioning "([^"]+)"$`, profRefuses)
	step(sc, `^rocprofv3 accepts the command line$`, profAccepts)
	step(sc, `^rocprofv3 warns that "([^"]+)"$`, profWarns)
	step(sc, `^rocprofv3 (creates|does not create) the kernel replay context$`, profReplayContext)
	step(sc, `^the dispatch on the `+kind+` agent runs (\d+) passes, one per counter group of that agent$`, profPassesOnAgent)
	step(sc, `^rocprofv3 installs neither continue nor the local context functions$`, profNoContinue)
	step(sc, `^the application runs (\d+) times, once per counter group$`, profAppRuns)
	step(sc, `^the JSON counter records carry replay_pass and the CSV has no Replay_Pass column$`, profOutputFields)
	step(sc, `^the output passes the rocprofv3 output checks$`, profValid)
	step(sc, `^the output is altered so that a later pass claims to be pass 0$`, profAlter)
	step(sc, `^the rocprofv3 output checks report (RPV-\d+)$`, profInvalid)
	step(sc, `^every output file is laid out as rocprofv3's writer lays it out$`, profWriterForm)
	step(sc, `^the output is altered so that (`+alterationNames()+`)$`, profAlterForm)
	step(sc, `^the rocprofv3 output checks report (RPV-\d+) about "([^"]+)" mentioning "([^"]+)"$`, profInvalidMentioning)
}

func runProf(ctx context.Context, line string) (context.Context, error) {
	w := get(ctx)
	if len(w.s.Agents) == 0 || len(w.s.Application.Dispatches) == 0 {
		return ctx, fmt.Errorf("give the machine and the application before running rocprofv3")
	}
	if err := w.applyPlans(); err != nil {
		return ctx, err
	}
	if err := spec.Validate(w.s); err != nil {
		return ctx, fmt.Errorf("the scenario builds an invalid application: %w", err)
	}
	p := &profRun{}
	ctx = context.WithValue(ctx, profKey{}, p)
	args := append(strings.Fields(line), "--", "application.yaml")
	cmd, err := rocprof.ParseArgs(args)
	if err != nil {
		p.err = err
		return ctx, nil
	}
	plan, err := cmd.Plan(nil)
	if plan != nil {
		p.warnings = plan.Warnings
	}
	if p.err = err; err != nil {
		return ctx, nil
	}
	if p.res, p.err = rocprof.Run(plan, w.s); p.err != nil {
		return ctx, nil
	}
	p.files = p.res.Files()
	return ctx, nil
}

func prof(ctx context.Context) (*profRun, error) {
	p, _ := ctx.Value(profKey{}).(*profRun)
	if p == nil {
		return nil, fmt.Errorf("rocprofv3 was not run in this scenario")
	}
	return p, nil
}

func profRefuses(ctx context.Context, rule, text string) error {
	p, err := prof(ctx)
	if err != nil {
		return err
	}
	if p.err == nil {
		return fmt.Errorf("rocprofv3 should refuse the command line with a %s diagnostic; it accepted it", rule)
	}
	found := false
	for _, e := range rocprof.Errors(p.err) {
		var d *rocprof.Diagnostic
		if errors.As(e, &d) && d.Rule == rule && strings.Contains(d.Msg, text) {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("rocprofv3 should refuse with a %s diagnostic mentioning %q; it said: %v", rule, text, p.err)
	}
	return nil
}

func profAccepts(ctx context.Context) error {
	_, err := accepted(ctx)
	return err
}

// accepted is where a step about what rocprofv3 did begins: the run, which
// should have accepted its command line and profiled.
func accepted(ctx context.Context) (*profRun, error) {
	p, err := prof(ctx)
	if err != nil {
		return nil, err
	}
	if p.err != nil {
		return nil, fmt.Errorf("rocprofv3 should accept the command line and profile; it said: %v", p.err)
	}
	return p, nil
}

func profWarns(ctx context.Context, text string) error {
	p, err := prof(ctx)
	if err != nil {
		return err
	}
	for _, w := range p.warnings {
		if strings.Contains(w, text) {
			return nil
		}
	}
	return fmt.Errorf("rocprofv3 should warn that %q; it warned %q", text, p.warnings)
}

// events are the tool-side trace events of one type over every run of the
// application: what rocprofv3's tool did, recorded as any tool's are.
func (p *profRun) events(typ trace.Type, keep func(trace.Event) bool) []trace.Event {
	if p.res == nil {
		return nil
	}
	var out []trace.Event
	for _, run := range p.res.Runs {
		out = append(out, where(run.Trace, func(e trace.Event) bool { return e.Type == typ && (keep == nil || keep(e)) })...)
	}
	return out
}

func profReplayContext(ctx context.Context, does string) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	n := len(p.events(trace.API, func(e trace.Event) bool { return e.Call == trace.CallCreateContext && e.Label == "kernel_replay" }))
	if want := map[string]int{"creates": 1, "does not create": 0}[does]; n != want*len(p.res.Runs) {
		return fmt.Errorf("rocprofv3 %s the kernel replay context; it created it %d times", does, n)
	}
	return nil
}

func profPassesOnAgent(ctx context.Context, kind string, n int) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	w := get(ctx)
	agent, err := w.agent(kind)
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(w.s.Agents, func(a spec.Agent) bool { return a.Name == agent })
	run := p.res.Runs[0]
	id := uint64(run.Agents[idx].ID)
	groups := run.AgentGroups[run.Agents[idx].ID]
	onAgent := func(e trace.Event) bool { return e.Agent == id }
	counts := p.events(trace.PassCount, onAgent)
	for _, e := range counts {
		if e.Result == nil || *e.Result != int64(n) || len(groups) != n {
			return fmt.Errorf("on the %s agent the pass count should be %d, its group count; it answered %v for %d groups", kind, n, e.Result, len(groups))
		}
	}
	passes := p.events(trace.Callback, func(e trace.Event) bool { return onAgent(e) && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter })
	if len(counts) == 0 || len(passes) != n*len(counts) {
		return fmt.Errorf("each dispatch on the %s agent should run %d passes; %d dispatches ran %d passes", kind, n, len(counts), len(passes))
	}
	return nil
}

// profNoContinue: the payload the tool leaves at CONFIG ENTER holds its
// replay_pass_count and no replay_continue; every pass produced its counter
// record (a local stop would have left one out); no pass state is left.
func profNoContinue(ctx context.Context) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	exits := p.events(trace.Returned, func(e trace.Event) bool { return e.Op == trace.OpConfig && e.Phase == trace.PhaseEnter })
	if len(exits) == 0 {
		return fmt.Errorf("rocprofv3 never returned from a CONFIG ENTER callback")
	}
	for _, e := range exits {
		if !slices.Contains(e.Payload, "replay_pass_count") || slices.Contains(e.Payload, "replay_continue") {
			return fmt.Errorf("rocprofv3 should install replay_pass_count and never replay_continue; as it returns from CONFIG ENTER dispatch %d's payload has %v", e.Dispatch, e.Payload)
		}
	}
	passes := len(p.events(trace.Callback, func(e trace.Event) bool { return e.Op == trace.OpPass && e.Phase == trace.PhaseEnter }))
	records := len(p.events(trace.Record, func(e trace.Event) bool { return e.Service == trace.CounterCollection && e.Pass != nil }))
	if passes == 0 || records != passes {
		return fmt.Errorf("every pass should collect its counter group (no local toggle); %d passes left %d counter records", passes, records)
	}
	for _, run := range p.res.Runs {
		if len(run.Published) > 0 {
			return fmt.Errorf("every pass index rocprofv3 published should be cleared at PASS EXIT; left: %v", run.Published)
		}
	}
	return nil
}

func profAppRuns(ctx context.Context, n int) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	if len(p.res.Runs) != n {
		return fmt.Errorf("the application should run %d times; it ran %d times", n, len(p.res.Runs))
	}
	for i, run := range p.res.Runs {
		if c := run.Config; c.Number != i+1 || len(c.Groups) != 1 || c.KernelReplay {
			return fmt.Errorf("application run %d should collect one group without kernel replay, in pass_%d: %+v", i+1, i+1, c.Groups)
		}
	}
	return nil
}

func (p *profRun) file(suffix string) ([]byte, string, error) {
	for name, data := range p.files {
		if strings.HasSuffix(name, suffix) {
			return data, name, nil
		}
	}
	return nil, "", fmt.Errorf("rocprofv3 wrote no %s file (files: %v)", suffix, keys(p.files))
}

// acceptedOutput is where a step about one file of rocprofv3's output
// begins: the run, which should have accepted its command line, and the
// file's contents and name.
func acceptedOutput(ctx context.Context, suffix string) (*profRun, []byte, string, error) {
	p, err := accepted(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	data, name, err := p.file(suffix)
	return p, data, name, err
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func profOutputFields(ctx context.Context) error {
	p, js, _, err := acceptedOutput(ctx, "results.json")
	if err != nil {
		return err
	}
	if !bytes.Contains(js, []byte(`"replay_pass"`)) {
		return fmt.Errorf("the JSON counter records should carry replay_pass")
	}
	csv, _, err := p.file("counter_collection.csv")
	if err != nil {
		return err
	}
	header, _, _ := bytes.Cut(csv, []byte("\n"))
	if bytes.Contains(bytes.ToLower(header), []byte("replay_pass")) {
		return fmt.Errorf("counter_collection.csv should have no Replay_Pass column: %s", header)
	}
	return nil
}

func profValid(ctx context.Context) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	for _, suffix := range []string{"results.json", "counter_collection.csv"} {
		data, name, err := p.file(suffix)
		if err != nil {
			return err
		}
		if probs := rocprof.Failures(p.validate(suffix, data)); len(probs) > 0 {
			return fmt.Errorf("%s should pass the output checks: %v", name, probs)
		}
	}
	return nil
}

// validate runs the output check of one file, told the counter groups the
// run requested (as config.json would tell it).
func (p *profRun) validate(suffix string, data []byte) []rocprof.Problem {
	if suffix == "counter_collection.csv" {
		return rocprof.ValidateCSV(bytes.NewReader(data))
	}
	cfg := p.res.Runs[0].Config
	return rocprof.ValidateJSONWith(bytes.NewReader(data), rocprof.ValidateOptions{Groups: cfg.Groups, KernelReplay: &cfg.KernelReplay})
}

var passOne = regexp.MustCompile(`"replay_pass":\s*1\b`)

// profAlter is a hand-made fault in the output: pass 1 relabelled pass 0.
func profAlter(ctx context.Context) error {
	p, js, name, err := acceptedOutput(ctx, "results.json")
	if err != nil {
		return err
	}
	if !passOne.Match(js) {
		return fmt.Errorf("the output has no record of pass 1 to alter")
	}
	p.files[name] = passOne.ReplaceAll(js, []byte(`"replay_pass":0`))
	return nil
}

func profInvalid(ctx context.Context, rule string) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	js, _, err := p.file("results.json")
	if err != nil {
		return err
	}
	probs := p.validate("results.json", js)
	for _, pr := range probs {
		if pr.Rule == rule {
			return nil
		}
	}
	return fmt.Errorf("the output checks should report %s; they reported %v", rule, probs)
}

// validateAll checks every file rocprofv3 wrote, as check-rocprofv3 checks
// an output directory, told the groups the run requested.
func (p *profRun) validateAll() ([]string, []rocprof.Problem, error) {
	fsys := fstest.MapFS{}
	for name, data := range p.files {
		fsys[name] = &fstest.MapFile{Data: data}
	}
	cfg := p.res.Runs[0].Config
	return rocprof.ValidateFS(fsys, rocprof.ValidateOptions{Groups: cfg.Groups, KernelReplay: &cfg.KernelReplay})
}

// profWriterForm (RPV-9): every CSV file and results.json passes the
// checks, the writer's quoting and number forms among them.
func profWriterForm(ctx context.Context) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	checked, probs, err := p.validateAll()
	if err != nil {
		return err
	}
	for _, suffix := range []string{"results.json", "counter_collection.csv", "kernel_trace.csv", "kernel_stats.csv", "agent_info.csv"} {
		if !slices.ContainsFunc(checked, func(f string) bool { return strings.HasSuffix(f, suffix) }) {
			return fmt.Errorf("rocprofv3 should have written a %s file to check; checked %v", suffix, checked)
		}
	}
	if probs = rocprof.Failures(probs); len(probs) > 0 {
		return fmt.Errorf("the output should be laid out as rocprofv3's writer lays it out: %v", probs)
	}
	return nil
}

// formAlterations are hand-made faults in the writer's form (RPV-9): the
// file they edit and the edit.
var formAlterations = map[string]struct {
	file string
	from *regexp.Regexp
	to   string
}{
	"the CSV's counter values are written as integers":  {"counter_collection.csv", regexp.MustCompile(`,([0-9]+)\.000000,`), ",$1,"},
	"the kernel trace's kernel names are not quoted":    {"kernel_trace.csv", regexp.MustCompile(`"increment"`), "increment"},
	"the JSON's counter values are written as integers": {"results.json", regexp.MustCompile(`("value": [0-9]+)\.0\n`), "$1\n"},
	"the statistics' averages have two decimals":        {"kernel_stats.csv", regexp.MustCompile(`,([0-9]+\.[0-9]{2})[0-9]{4},`), ",$1,"},
}

func alterationNames() string {
	var names []string
	for n := range formAlterations {
		names = append(names, regexp.QuoteMeta(n))
	}
	slices.Sort(names)
	return strings.Join(names, "|")
}

func profAlterForm(ctx context.Context, what string) error {
	alt := formAlterations[what]
	p, data, name, err := acceptedOutput(ctx, alt.file)
	if err != nil {
		return err
	}
	if !alt.from.Match(data) {
		return fmt.Errorf("%s has nothing to alter so that %s", name, what)
	}
	p.files[name] = alt.from.ReplaceAll(data, []byte(alt.to))
	return nil
}

func profInvalidMentioning(ctx context.Context, rule, about, text string) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	_, probs, err := p.validateAll()
	if err != nil {
		return err
	}
	for _, pr := range probs {
		if pr.Rule == rule && strings.Contains(pr.Msg, about) && strings.Contains(pr.Msg, text) {
			return nil
		}
	}
	return fmt.Errorf("the output checks should report %s about %s mentioning %q; they reported %v", rule, about, text, probs)
}
