package steps

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/spec"
)

// The steps about the tool's plan: the pass count and continue it answers, user data, local starts and stops, deliberate misuse.

func registerPlan(sc *godog.ScenarioContext) {
	step(sc, `^the tool's replay_pass_count (is left unset|returns \d+)$`, toolPassCount)
	step(sc, `^the tool's replay_continue (is left unset|is ignored|stops after pass \d+|always says go on)$`, toolContinue)
	step(sc, `^the tool asks for (\d+) pass(?:es)?$`, asksFor)
	step(sc, `^the tool asks for (\d+) passes and stops after pass (\d+)$`, asksForStopping)
	step(sc, `^the tool asks for (\d+) passes and its continue always says go on$`, asksForAlways)
	step(sc, `^the tool asks for an indefinite loop and stops after pass (\d+)$`, indefiniteStopping)
	step(sc, `^the tool asks for an indefinite loop whose continue never says stop$`, indefiniteNeverStops)
	step(sc, `^the tool asks for an indefinite loop but installs no continue callback$`, indefiniteWithoutContinue)
	step(sc, `^the tool asks for one pass per counter group of the dispatch's agent$`, asksForGroups)
	step(sc, `^the tool asks for up to (\d+) passes and stops once "([A-Z_]+)" reads the same twice$`, converge)
	step(sc, `^the tool leaves the pass count unset$`, leavesPassCountUnset)
	step(sc, `^the tool declines to replay `+name+`$`, declinesToReplay)
	step(sc, `^the tool asks for (\d+) pass(?:es)? for `+name+`$`, asksForPassesOf)
	step(sc, `^for `+name+` the tool's continue (is left unset|stops after pass \d+|always says go on)$`, continueFor)
	step(sc, `^the tool writes (\d+) into the replay user data when the dispatch is configured$`, userData)
	step(sc, `^the tool writes (\d+) into the replay user data when `+name+` is configured$`, userDataFor)
	step(sc, `^the tool overwrites the user data as every pass begins$`, overwriteUserData)
	step(sc, `^in (pass \d+|every pass) the tool (starts|stops) ("[\w-]+"(?:(?:, | and )"[\w-]+")*) locally$`, local)
	step(sc, `^the tool tries to (start|stop) `+name+` locally (while the dispatch is configured|as the dispatch's configuration ends|as a pass ends|as a pass begins)$`, misuse)
}

// toolPlan is the plan the tool follows for every dispatch.
func toolPlan(ctx context.Context) *spec.Plan { return &get(ctx).s.Tool.Plan }

// plan is the plan a step changes: the tool's (dispatch ""), or one
// dispatch's.
func (w *world) plan(dispatch string) *spec.Plan {
	if dispatch == "" {
		return &w.s.Tool.Plan
	}
	// A dispatch's own plan starts from the tool's plan as the scenario
	// left it; it is merged in when the spec is complete (applyPlans), so
	// that steps may name a dispatch before the application makes it.
	if w.plans == nil {
		w.plans = map[string]*spec.Plan{}
	}
	if p, ok := w.plans[dispatch]; ok {
		return p
	}
	p := &spec.Plan{}
	w.plans[dispatch] = p
	w.planOrder = append(w.planOrder, dispatch)
	return p
}

// applyPlans gives each dispatch its own plan: the tool's plan with what
// the scenario changed for that dispatch.
func (w *world) applyPlans() error {
	for _, name := range w.planOrder {
		d, err := w.dispatch(name)
		if err != nil {
			return err
		}
		own := w.plans[name]
		p := w.s.Tool.Plan
		if own.Passes != "" {
			p.Passes = own.Passes
		}
		if own.Continue != nil || own.Passes != "" {
			p.Continue = own.Continue
		}
		if own.UserData != nil {
			p.UserData = own.UserData
		}
		if len(own.Actions) > 0 {
			p.Actions = append(slices.Clone(p.Actions), own.Actions...)
		}
		if own.Local != nil {
			p.Local = own.Local // the dispatch's own local toggles, not the tool's
		}
		d.Plan = &p
	}
	return nil
}

var aNumber = regexp.MustCompile(`(\d+)`)

// setPassCount reads the pass-count table's left column, "is left unset" or
// a phrase with the number of passes, into a plan.
func setPassCount(ctx context.Context, dispatch, what string) error {
	p := get(ctx).plan(dispatch)
	if what == "is left unset" {
		p.Passes = spec.PassesNone
		return nil
	}
	n, err := strconv.ParseUint(aNumber.FindString(what), 10, 64)
	if err != nil {
		return fmt.Errorf("unknown pass count %q", what)
	}
	p.Passes = spec.PassesOf(n)
	return nil
}

// setContinue reads the table's middle column into a plan.
func setContinue(ctx context.Context, dispatch, what string) error {
	p := get(ctx).plan(dispatch)
	switch {
	case what == "is left unset" || what == "is ignored":
		p.Continue = nil
	case what == "always says go on":
		p.Continue = alwaysGoOn()
	case strings.HasPrefix(what, "stops after pass "):
		n, err := strconv.ParseUint(strings.TrimPrefix(what, "stops after pass "), 10, 64)
		if err != nil {
			return err
		}
		p.Continue = stopAfter(n)
	default:
		return fmt.Errorf("unknown continue policy %q", what)
	}
	return nil
}

func toolPassCount(ctx context.Context, what string) error { return setPassCount(ctx, "", what) }

func toolContinue(ctx context.Context, what string) error { return setContinue(ctx, "", what) }

func leavesPassCountUnset(ctx context.Context) error { return setPassCount(ctx, "", "is left unset") }

func declinesToReplay(ctx context.Context, dispatch string) error {
	return setPassCount(ctx, dispatch, "is left unset")
}

func asksForPassesOf(ctx context.Context, n, dispatch string) error {
	return setPassCount(ctx, dispatch, n)
}

func continueFor(ctx context.Context, dispatch, what string) error {
	return setContinue(ctx, dispatch, what)
}

func stopAfter(pass uint64) *spec.ContinuePolicy { return &spec.ContinuePolicy{StopAfter: u64(pass)} }

func alwaysGoOn() *spec.ContinuePolicy { return &spec.ContinuePolicy{Always: true} }

// loop sets the tool's pass count and its continue together.
func loop(ctx context.Context, passes spec.Passes, cont *spec.ContinuePolicy) error {
	p := toolPlan(ctx)
	p.Passes, p.Continue = passes, cont
	return nil
}

func asksFor(ctx context.Context, n uint64) error {
	toolPlan(ctx).Passes = spec.PassesOf(n)
	return nil
}

func asksForStopping(ctx context.Context, n, after uint64) error {
	return loop(ctx, spec.PassesOf(n), stopAfter(after))
}

func asksForAlways(ctx context.Context, n uint64) error {
	return loop(ctx, spec.PassesOf(n), alwaysGoOn())
}

func indefiniteStopping(ctx context.Context, after uint64) error {
	return asksForStopping(ctx, 0, after)
}

func indefiniteNeverStops(ctx context.Context) error { return asksForAlways(ctx, 0) }

func indefiniteWithoutContinue(ctx context.Context) error { return loop(ctx, spec.PassesOf(0), nil) }

func asksForGroups(ctx context.Context) error {
	toolPlan(ctx).Passes = spec.PassesGroups
	return nil
}

func converge(ctx context.Context, n uint64, counter string) error {
	return loop(ctx, spec.PassesOf(n), &spec.ContinuePolicy{Converge: &spec.Converge{Counter: counter, AtMost: n}})
}

func userData(ctx context.Context, v uint64) error { return userDataFor(ctx, v, "") }

func userDataFor(ctx context.Context, v uint64, dispatch string) error {
	get(ctx).plan(dispatch).UserData = u64(v)
	return nil
}

func overwriteUserData(ctx context.Context) error {
	toolPlan(ctx).WriteUserDataInPass = true
	return nil
}

// local adds a local start or stop made in PASS ENTER.
func local(ctx context.Context, when, call, names string) error {
	pass := int64(-1)
	if when != "every pass" {
		n, err := strconv.ParseInt(strings.TrimPrefix(when, "pass "), 10, 64)
		if err != nil {
			return fmt.Errorf("unknown pass %q", when)
		}
		pass = n
	}
	lt := spec.LocalToggle{Pass: pass}
	if call == "starts" {
		lt.Start = words(names)
	} else {
		lt.Stop = words(names)
	}
	p := toolPlan(ctx)
	p.Local = append(p.Local, lt)
	return nil
}

// windows are the callbacks a misused local toggle is made in.
var windows = map[string]string{
	"while the dispatch is configured":     "CONFIG_ENTER",
	"as the dispatch's configuration ends": "CONFIG_EXIT",
	"as a pass ends":                       "PASS_EXIT",
	"as a pass begins":                     "PASS_ENTER",
}

// misuse: the tool calls a local toggle where it chooses, on purpose.
func misuse(ctx context.Context, call, name, where string) error {
	in, ok := windows[where]
	if !ok {
		return fmt.Errorf("unknown window %q", where)
	}
	t := &get(ctx).s.Tool
	t.Misuse = append(t.Misuse, spec.Misuse{Call: "local_" + call, Context: name, In: in})
	return nil
}
