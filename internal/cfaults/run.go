package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/report"
)

// Pseudo-rules: what a spec showed besides an oracle's rule.
const (
	expectRule = check.ExpectRule // the spec's own expectations failed
	errorRule  = "ERROR"          // the spec could not be run or judged
)

// outcome is what one run of the library showed: for each spec, the rules
// of its violations (with EXPECT and ERROR as above).
type outcome map[string]map[string]bool

// runner runs the spec library on a driver at a profile, through the
// replayspec CLI, as a port author would.
type runner struct {
	replayspec string
	specs      []string
	timeout    time.Duration
	maxPasses  int
	reports    string // where each run's JSON report is kept
}

// reportFile is where the report of one run is kept: name and profile
// say whose, tag tells repeated runs apart.
func (r *runner) reportFile(name, profile string, tag int) string {
	return fmt.Sprintf("%s/%s.%s.%d.json", r.reports, name, profile, tag)
}

// read reads the report a previous run kept.
func (r *runner) read(name, profile string, tag int) (outcome, error) {
	file := r.reportFile(name, profile, tag)
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%v: run without -reuse first", err)
	}
	out, err := readOutcome(bytes.NewBuffer(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return out, nil
}

// run runs the library once and reads its report.
func (r *runner) run(driver, name, profile string, tag int) (outcome, error) {
	file := r.reportFile(name, profile, tag)
	args := []string{"run", "--format", "json", "-j", "1", "--timeout", r.timeout.String(),
		"--max-passes", fmt.Sprint(r.maxPasses), "--target", "exec:" + driver + " --profile " + profile}
	args = append(args, r.specs...)
	cmd := exec.Command(r.replayspec, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if werr := os.WriteFile(file, stdout.Bytes(), 0o644); werr != nil {
		return nil, werr
	}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: some spec failed
		return nil, fmt.Errorf("%s %s: %v\n%s", r.replayspec, strings.Join(args, " "), err, tail(stderr.String(), 2000))
	}
	out, err := readOutcome(&stdout)
	if err != nil {
		return nil, fmt.Errorf("%s (%s at %s): %v\n%s", file, name, profile, err, tail(stderr.String(), 2000))
	}
	return out, nil
}

// readOutcome reads a JSON report stream; one cut short is an error: a
// fault's verdict needs the whole library.
func readOutcome(r *bytes.Buffer) (outcome, error) {
	_, results, end, err := report.ReadJSON(r)
	if err != nil {
		return nil, err
	}
	if end.Stopped != "" {
		return nil, fmt.Errorf("the run stopped early: %s", end.Stopped)
	}
	out := outcome{}
	for _, res := range results {
		key := res.Name
		if res.Run > 0 {
			key = fmt.Sprintf("%s#%d", res.Name, res.Run)
		}
		rules := map[string]bool{}
		for _, v := range res.Violations {
			rules[v.Rule] = true
		}
		if res.Verdict == "error" {
			rules[errorRule] = true
		}
		out[key] = rules
	}
	if len(out) == 0 {
		return nil, errors.New("the report holds no result: no spec ran")
	}
	return out, nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
