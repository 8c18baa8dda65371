package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Step is one entry of expect.sequence: something that happened to a
// dispatch, as a spec writes it ("PASS_ENTER 1", "kernel", "restore 2").
type Step struct {
	Kind string
	// Pass is set for the kinds that take one.
	Pass *uint64
	// Name is the context or dispatch named by a call.
	Name string
}

// The kinds of step and what follows each.
const (
	StepConfigEnter  = WindowConfigEnter  // CONFIG ENTER callback
	StepConfigExit   = WindowConfigExit   // CONFIG EXIT callback
	StepPassEnter    = WindowPassEnter    // PASS ENTER callback; a pass
	StepPassExit     = WindowPassExit     // PASS EXIT callback; a pass
	StepPassCount    = PointPassCount     // replay_pass_count called
	StepContinue     = PointContinue      // replay_continue called after a pass
	StepSnapshot     = "snapshot"         // the SDK saved device memory
	StepRestore      = "restore"          // the SDK restored memory before a pass
	StepKernel       = "kernel"           // the kernel ran on the GPU
	StepComplete     = "complete"         // the application saw the completion
	StepLocalStart   = "local_start"      // replay_start_context; a context
	StepLocalStop    = "local_stop"       // replay_stop_context; a context
	StepStartContext = ActionStartContext // a global start from a callback; a context
	StepStopContext  = ActionStopContext  // a global stop from a callback; a context
	StepDispatch     = ActionDispatch     // the tool's own dispatch from a callback; a dispatch
)

var (
	stepsPlain = []string{StepConfigEnter, StepConfigExit, StepPassCount, StepSnapshot, StepKernel, StepComplete}
	stepsPass  = []string{StepPassEnter, StepPassExit, StepContinue, StepRestore}
	stepsNamed = []string{StepLocalStart, StepLocalStop, StepStartContext, StepStopContext, StepDispatch}
	stepForms  = []string{"CONFIG_ENTER", "CONFIG_EXIT", "pass_count", "snapshot", "kernel", "complete",
		"PASS_ENTER P", "PASS_EXIT P", "continue P", "restore P",
		"local_start C", "local_stop C", "start_context C", "stop_context C", "dispatch D"}
)

// ParseStep reads one sequence entry.
func ParseStep(s string) (Step, error) {
	f := strings.Fields(s)
	bad := &allowedError{msg: fmt.Sprintf("sequence step %q is not a step", s), allowed: stepForms}
	if len(f) == 0 || len(f) > 2 || strings.Join(f, " ") != s {
		return Step{}, bad
	}
	kind := f[0]
	switch {
	case contains(stepsPlain, kind) && len(f) == 1:
		return Step{Kind: kind}, nil
	case contains(stepsPass, kind) && len(f) == 2:
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return Step{}, bad
		}
		return Step{Kind: kind, Pass: &n}, nil
	case contains(stepsNamed, kind) && len(f) == 2 && namePattern.MatchString(f[1]):
		return Step{Kind: kind, Name: f[1]}, nil
	}
	return Step{}, bad
}

// String writes the step as a spec does.
func (s Step) String() string {
	switch {
	case s.Pass != nil:
		return s.Kind + " " + strconv.FormatUint(*s.Pass, 10)
	case s.Name != "":
		return s.Kind + " " + s.Name
	}
	return s.Kind
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
