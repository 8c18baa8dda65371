package steps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/trace"
)

// Reading the phrases of a step, and writing numbers back into a message.

// kind is an agent kind of the simulator, as the simulator lists them.
var kind = `(` + strings.Join(sim.Kinds(), "|") + `)`

// Reusable pieces of step patterns.
const (
	name    = `"([A-Za-z0-9_][A-Za-z0-9_-]*)"`
	optOf   = `(?: of "([A-Za-z0-9_][A-Za-z0-9_-]*)")?`
	nums    = `((?:\d+)(?:(?:, | and )\d+)*)`
	ruleIDs = `([A-Z]+-\d+(?:(?:, | and )[A-Z]+-\d+)*)`
)

// dispatchTail is a dispatch sentence: "increment" [with 9] on "x" [and "y"]
// [on the MI200 agent] [as "k0"].
var dispatchTail = `"([a-z_]+)"(?: with (-?\d+))? on ("[\w-]+"(?: and "[\w-]+")?)(?: on the ` + kind + ` agent)?(?: as "([\w-]+)")?`

// services are the services as scenarios name them, and as traces do.
var services = []struct {
	phrase string
	name   trace.Service
}{
	{"kernel trace", trace.KernelTrace},
	{"counter", trace.CounterCollection},
	{"PC sample", trace.PCSampling},
	{"SPM", trace.SPM},
	{"thread trace", trace.ThreadTrace},
	{"device count", trace.DeviceCounting},
}

// svcPhrase matches a service as scenarios name it.
var svcPhrase = func() string {
	var ps []string
	for _, s := range services {
		ps = append(ps, s.phrase)
	}
	return `(` + strings.Join(ps, "|") + `)`
}()

// serviceName is the trace's name of the service a scenario names.
func serviceName(phrase string) trace.Service {
	for _, s := range services {
		if s.phrase == phrase {
			return s.name
		}
	}
	return ""
}

var listSplit = regexp.MustCompile(`\s*(?:,|\band\b)\s*`)

// words splits "A, B and C" into its items.
func words(s string) []string {
	var out []string
	for _, p := range listSplit.Split(strings.TrimSpace(s), -1) {
		if p = strings.Trim(strings.TrimSpace(p), `"`); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// numbers reads "0, 1 and 2" as numbers.
func numbers(s string) ([]uint64, error) {
	var out []uint64
	for _, p := range words(s) {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a list of numbers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// times reads "once", "twice" and "N times".
func times(s string) int {
	switch s {
	case "once":
		return 1
	case "twice":
		return 2
	}
	var n int
	fmt.Sscanf(s, "%d times", &n)
	return n
}

// list writes numbers as "0, 1, 2", or "none".
func list(ns []uint64) string {
	if len(ns) == 0 {
		return "none"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// u reads an optional number, 0 where it is absent.
func u(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func u64(v uint64) *uint64 { return &v }
