// Package protocol holds the messages of the driver protocol
// (docs/driver-protocol.md) that both sides share: the handshake a driver
// writes first and the end line it writes after its trace.
package driver

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// Version is the protocol a driver names in its handshake. Bump it on any
// change a driver could notice.
const Version = "replayspec.driver/v1"

// Implementation names the port under test.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Handshake is the first line a driver writes, before it reads the spec.
type Handshake struct {
	Protocol       string         `json:"protocol"`
	Implementation Implementation `json:"implementation"`
	// Capabilities are services and behaviours (spec.Capabilities) and
	// the rule families (spec.RuleFamilies) the port claims.
	Capabilities []string `json:"capabilities"`
	// Profile names what the port can report (docs/driver-protocol.md,
	// "Observability profiles"): black-box, runtime or full. Optional.
	Profile string `json:"profile,omitempty"`
	// Sources are the event sources every trace of the port reports; its
	// headers must say the same. Absent: the profile's, else all of them
	// (a driver from before profiles).
	Sources []trace.Source `json:"sources,omitempty"`
}

// Profiles are the named observability profiles: what a port behind the
// protocol can report (docs/driver-protocol.md).
var Profiles = []struct {
	Name    string
	Sources []trace.Source
}{
	{ProfileBlackBox, []trace.Source{trace.SourceTool, trace.SourceApp}},
	{ProfileRuntime, []trace.Source{trace.SourceTool, trace.SourceApp, trace.SourceRuntime}},
	{ProfileFull, trace.AllSources},
}

// Profile names.
const (
	ProfileBlackBox = "black-box" // the tool's and the application's view
	ProfileRuntime  = "runtime"   // plus an interposer on the runtime
	ProfileFull     = "full"      // plus the SDK's own reports
)

// ProfileSources returns the sources of a named profile.
func ProfileSources(name string) ([]trace.Source, bool) {
	for _, p := range Profiles {
		if p.Name == name {
			return slices.Clone(p.Sources), true
		}
	}
	return nil, false
}

// ProfileOf names the profile whose sources are exactly srcs ("" when none
// is).
func ProfileOf(srcs []trace.Source) string {
	for _, p := range Profiles {
		if SameSources(p.Sources, srcs) {
			return p.Name
		}
	}
	return ""
}

// SameSources reports whether a and b hold the same sources.
func SameSources(a, b []trace.Source) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}

// ReportedSources is what the port's traces report: its sources, else its
// profile's, else every source.
func (h Handshake) ReportedSources() []trace.Source {
	if len(h.Sources) > 0 {
		return slices.Clone(h.Sources)
	}
	if s, ok := ProfileSources(h.Profile); ok {
		return s
	}
	return slices.Clone(trace.AllSources)
}

// End is the line a driver writes after the last event of its trace, so
// that a trace cut short (an unflushed buffer, a crash mid-write) is told
// apart from a short trace.
type End struct {
	End int `json:"end"` // the number of events written
}

// IsEnd reports whether an NDJSON line is the end line rather than an event.
func IsEnd(line []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(line), []byte(`{"end"`)) }

// Decode reads one JSON line strictly (trace.DecodeStrict).
func Decode(line []byte, v any) error { return trace.DecodeStrict(line, v) }

// Check validates a handshake against the vocabularies the runner knows:
// the protocol version, a non-empty implementation name, and capabilities
// each a known capability or rule family.
func (h Handshake) Check(capabilities, families []string) error {
	if h.Protocol != Version {
		return fmt.Errorf("the driver speaks protocol %q; this runner speaks %q", h.Protocol, Version)
	}
	if h.Implementation.Name == "" {
		return fmt.Errorf("the handshake has no implementation.name")
	}
	var unknown []string
	for _, c := range h.Capabilities {
		if !slices.Contains(capabilities, c) && !slices.Contains(families, c) {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown capabilities %s; known: %s and the rule families %s",
			strings.Join(unknown, ", "), strings.Join(capabilities, ", "), strings.Join(families, ", "))
	}
	return h.checkSources()
}

// checkSources: known sources, each once, at least the tool's; a profile,
// when named, that agrees with them.
func (h Handshake) checkSources() error {
	var names []string
	for _, p := range Profiles {
		names = append(names, p.Name)
	}
	profile, named := ProfileSources(h.Profile)
	if h.Profile != "" && !named {
		return fmt.Errorf("unknown profile %q; known: %s", h.Profile, strings.Join(names, ", "))
	}
	seen := map[trace.Source]bool{}
	for _, s := range h.Sources {
		if !slices.Contains(trace.AllSources, s) {
			return fmt.Errorf("unknown source %q in the handshake; known: %s", s, joinSources(trace.AllSources))
		}
		if seen[s] {
			return fmt.Errorf("source %q is listed twice in the handshake", s)
		}
		seen[s] = true
	}
	if len(h.Sources) > 0 && !seen[trace.SourceTool] {
		return fmt.Errorf("the handshake's sources %s lack %q: every port reports what its tool sees", joinSources(h.Sources), trace.SourceTool)
	}
	if named && len(h.Sources) > 0 && !SameSources(profile, h.Sources) {
		return fmt.Errorf("the handshake names profile %q (sources %s) but lists sources %s", h.Profile, joinSources(profile), joinSources(h.Sources))
	}
	return nil
}

func joinSources(srcs []trace.Source) string {
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = string(s)
	}
	return "[" + strings.Join(out, ", ") + "]"
}
