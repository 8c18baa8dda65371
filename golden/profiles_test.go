package golden

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// profileTarget is the reference engine on the simulator seen through a
// port's observability profile: its traces keep only the events of the
// profile's sources and say so in the header, as a driver at that profile
// writes them (docs/driver-protocol.md).
type profileTarget struct {
	profile string
	sources []trace.Source
}

func (p profileTarget) Name() string           { return "sim@" + p.profile }
func (p profileTarget) Capabilities() []string { return simtarget.Sim{}.Capabilities() }

func (p profileTarget) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	t, err := simtarget.Sim{}.Run(ctx, s, target.Options{})
	out := trace.Trace{Header: t.Header}
	out.Header.Sources = slices.Clone(p.sources)
	for _, e := range t.Events {
		if src, ok := e.Type.Source(); ok && slices.Contains(p.sources, src) {
			out.Events = append(out.Events, e)
			if opts.Sink != nil {
				opts.Sink(&e)
			}
		}
	}
	return out, err
}

// TestLibraryAtEveryProfile: the whole library passes on the reference
// engine at every profile, judged on what that profile's trace carries.
// A correct implementation must never fail because its trace lacks a
// source: what the missing sources would show is not observable, never a
// failure (docs/oracles.md). The C port is held to the same at every
// profile by make port-c-check; this keeps the oracles honest without it.
func TestLibraryAtEveryProfile(t *testing.T) {
	for _, p := range driver.Profiles {
		tg := profileTarget{profile: p.Name, sources: p.Sources}
		t.Run(p.Name, func(t *testing.T) {
			for _, s := range library(t) {
				r := runner.Run(context.Background(), s, runner.Options{Target: tg})
				if v := r.Verdict(); v != runner.Pass {
					var msg strings.Builder
					for _, vi := range r.Violations {
						msg.WriteString("\n" + vi.String())
					}
					t.Errorf("%s at the %s profile: verdict %s (err %v, unseen %v, not exercised %v)%s", s.Name, p.Name, v, r.Err, r.Unseen, r.Unexercised, msg.String())
				}
			}
		})
	}
}

// The oracles judge digests by the algorithm the trace's header names
// (trace v3): the same trace whose header claims FNV-1a while its digests
// are XXH3 fails on its buffers, so a reader that ignored the header (or
// a port that named the wrong one) cannot pass unnoticed.
func TestDigestsJudgedByTheHeadersAlgorithm(t *testing.T) {
	failed := 0
	for _, s := range library(t) {
		tr, err := simtarget.Sim{}.Run(context.Background(), spec.Defaults(s), target.Options{})
		if err != nil || tr.Header.DigestAlgorithm() != trace.DigestXXH3 {
			t.Fatalf("%s: %v, digest %s", s.Name, err, tr.Header.DigestAlgorithm())
		}
		if j, _, _ := check.JudgeSpec(s, tr); digestViolation(j.Violations) {
			t.Fatalf("%s: a digest is wrong on the engine's own trace", s.Name)
		}
		tr.Header.Digest = trace.DigestFNV1a
		if j, _, _ := check.JudgeSpec(s, tr); digestViolation(j.Violations) {
			failed++
		}
	}
	if failed == 0 {
		t.Error("no spec of the library fails when its header names FNV-1a over XXH3 digests")
	}
}

// digestViolation reports whether vs say a buffer's digest is not its values'.
func digestViolation(vs []check.Violation) bool {
	return slices.ContainsFunc(vs, func(v check.Violation) bool { return strings.Contains(v.Message, "digest to") })
}
