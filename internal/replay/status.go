package replay

import "fmt"

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

var statusNames = [...]string{
	"SUCCESS", "ERROR", "ERROR_CONTEXT_NOT_FOUND", "ERROR_BUFFER_NOT_FOUND",
	"ERROR_KIND_NOT_FOUND", "ERROR_OPERATION_NOT_FOUND", "ERROR_THREAD_NOT_FOUND",
	"ERROR_AGENT_NOT_FOUND", "ERROR_COUNTER_NOT_FOUND", "ERROR_CONTEXT_ERROR",
	"ERROR_CONTEXT_INVALID", "ERROR_CONTEXT_NOT_STARTED", "ERROR_CONTEXT_CONFLICT",
	"ERROR_CONTEXT_ID_NOT_ZERO", "ERROR_BUFFER_BUSY", "ERROR_SERVICE_ALREADY_CONFIGURED",
	"ERROR_CONFIGURATION_LOCKED", "ERROR_NOT_IMPLEMENTED", "ERROR_INCOMPATIBLE_ABI",
	"ERROR_INVALID_ARGUMENT",
}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("STATUS_%d", int(s))
}

// ParseStatus reads the names String writes.
func ParseStatus(name string) (Status, bool) {
	for i, n := range statusNames {
		if n == name {
			return Status(i), true
		}
	}
	return 0, false
}
