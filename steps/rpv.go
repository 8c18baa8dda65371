package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/internal/rocprof"
	"github.com/replayspec/replayspec/spec"
)

// Steps of rpv.feature: the rocprofv3 front end (package rocprof), run on
// the scenario's machine and application as `replayspec prof` runs it.

type profRun struct {
	opts     rocprof.Options
	warnings []string
	err      error
	res      *rocprof.Result
	files    map[string][]byte
}

type profKey struct{}

func registerRPV(sc *godog.ScenarioContext) {
	sc.Step(`^the user runs rocprofv3 with "([^"]*)"$`, runProf)
	sc.Step(`^rocprofv3 refuses with a diagnostic for (RPV-\d+) mentioning "([^"]+)"$`, profRefuses)
	sc.Step(`^rocprofv3 accepts the command line$`, profAccepts)
	sc.Step(`^rocprofv3 warns that "([^"]+)"$`, profWarns)
	sc.Step(`^rocprofv3 (creates|does not create) the kernel replay context$`, profReplayContext)
	sc.Step(`^the dispatch on the `+kind+` agent runs (\d+) passes, one per counter group of that agent$`, profPassesOnAgent)
	sc.Step(`^rocprofv3 installs neither continue nor the local context functions$`, profNoContinue)
	sc.Step(`^the application runs (\d+) times, once per counter group$`, profAppRuns)
	sc.Step(`^the JSON counter records carry replay_pass and the CSV has no Replay_Pass column$`, profOutputFields)
	sc.Step(`^the output passes the rocprofv3 output checks$`, profValid)
	sc.Step(`^the output is altered so that a later pass claims to be pass 0$`, profAlter)
	sc.Step(`^the rocprofv3 output checks report (RPV-\d+)$`, profInvalid)
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
	o, err := rocprof.ParseArgs(args)
	if err != nil {
		p.err = err
		return ctx, nil
	}
	o.Formats = []string{"csv", "json"}
	p.opts = o
	if p.warnings, p.err = o.Check(); p.err != nil {
		return ctx, nil
	}
	if p.res, p.err = rocprof.Run(o, w.s); p.err != nil {
		return ctx, nil
	}
	p.files, p.err = p.res.Files()
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
	for _, e := range flatten(p.err) {
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

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
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

// events are rocprofv3's events of one kind, over every run of the
// application.
func (p *profRun) events(what string) []rocprof.Event {
	if p.res == nil {
		return nil
	}
	var out []rocprof.Event
	for _, run := range p.res.Passes {
		out = append(out, where(run.Events, func(e rocprof.Event) bool { return e.What == what })...)
	}
	return out
}

func profReplayContext(ctx context.Context, does string) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	n := len(where(p.events("create_context"), func(e rocprof.Event) bool { return e.Context == "kernel_replay" }))
	if want := map[string]int{"creates": 1, "does not create": 0}[does]; n != want*len(p.res.Passes) {
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
	run := p.res.Passes[0]
	id := run.Agents[idx].ID
	groups := run.AgentGroups[id]
	onAgent := func(e rocprof.Event) bool { return e.Agent == id }
	counts := where(p.events("pass_count"), onAgent)
	for _, e := range counts {
		if e.N != uint64(n) || len(groups) != n {
			return fmt.Errorf("on the %s agent the pass count should be %d, its group count; it answered %d for %d groups", kind, n, e.N, len(groups))
		}
	}
	if passes := len(where(p.events("PASS_ENTER"), onAgent)); len(counts) == 0 || passes != n*len(counts) {
		return fmt.Errorf("each dispatch on the %s agent should run %d passes; %d dispatches ran %d passes", kind, n, len(counts), passes)
	}
	return nil
}

func profNoContinue(ctx context.Context) error {
	p, err := accepted(ctx)
	if err != nil {
		return err
	}
	for _, what := range []string{"CONFIG_ENTER", "CONFIG_EXIT", "PASS_ENTER", "PASS_EXIT"} {
		for _, e := range p.events(what) {
			if slices.Contains(e.Payload, "replay_continue") {
				return fmt.Errorf("rocprofv3 should never install continue; %s shows it: %+v", what, e)
			}
		}
	}
	for _, e := range p.events("local") {
		return fmt.Errorf("rocprofv3 should never call the local context functions: %+v", e)
	}
	for _, run := range p.res.Passes {
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
	if len(p.res.Passes) != n {
		return fmt.Errorf("the application should run %d times; it ran %d times", n, len(p.res.Passes))
	}
	for i, run := range p.res.Passes {
		if run.Number != i+1 || len(run.PMC) != 1 || run.KernelReplay {
			return fmt.Errorf("application run %d should collect one group without kernel replay: %+v", i+1, run.PMC)
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
	for _, out := range outputChecks {
		data, name, err := p.file(out.suffix)
		if err != nil {
			return err
		}
		if probs := out.validate(bytes.NewReader(data)); len(probs) > 0 {
			return fmt.Errorf("%s should pass the output checks: %v", name, probs)
		}
	}
	return nil
}

// outputChecks are the files of rocprofv3's output that the output checks
// read, each with its check.
var outputChecks = []struct {
	suffix   string
	validate func(io.Reader) []rocprof.Problem
}{
	{"results.json", rocprof.ValidateJSON},
	{"counter_collection.csv", rocprof.ValidateCSV},
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
	p, err := prof(ctx)
	if err != nil {
		return err
	}
	js, _, err := p.file("results.json")
	if err != nil {
		return err
	}
	probs := rocprof.ValidateJSON(bytes.NewReader(js))
	for _, pr := range probs {
		if pr.Rule == rule {
			return nil
		}
	}
	return fmt.Errorf("the output checks should report %s; they reported %v", rule, probs)
}
