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
	return nil
}
