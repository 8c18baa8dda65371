package replay

import (
	"fmt"

	"github.com/replayspec/replayspec/trace"
)

// Status is rocprofiler_status_t: the result of every SDK call. Values and
// names follow the reference (REFERENCE.md).
type Status int

// Status codes, in the reference's order.
const (
	StatusSuccess Status = iota
	StatusError
	StatusErrorContextNotFound
	StatusErrorBufferNotFound
	StatusErrorKindNotFound
	StatusErrorOperationNotFound
	StatusErrorThreadNotFound
	StatusErrorAgentNotFound
	StatusErrorCounterNotFound
	StatusErrorContextError
	StatusErrorContextInvalid
	StatusErrorContextNotStarted
	StatusErrorContextConflict
	StatusErrorContextIDNotZero
	StatusErrorBufferBusy
	StatusErrorServiceAlreadyConfigured
	StatusErrorConfigurationLocked
	StatusErrorNotImplemented
	StatusErrorIncompatibleABI
	StatusErrorInvalidArgument
)

func (s Status) String() string {
	if s >= 0 && int(s) < len(trace.StatusEnum) {
		return string(trace.StatusEnum[s])
	}
	return fmt.Sprintf("STATUS_%d", int(s))
}

// Trace is the status as traces write it.
func (s Status) Trace() trace.Status { return trace.Status(s.String()) }
