package tracediff

import "github.com/replayspec/replayspec/trace"

// Touches maps each event type to the rules whose oracles read it
// (docs/oracles.md): a divergence in such an event is evidence about
// those rules. TestTouchesCoverEveryType keeps it complete and its rule
// IDs real.
var Touches = map[trace.Type][]string{
	trace.API:          {"API-1", "API-3", "API-4", "API-7", "ACT-2", "ACT-3", "ACT-5", "LCX-4", "LCX-5", "LCX-6"},
	trace.Callback:     {"CB-1", "CB-2", "PC-3", "PC-4", "PC-5", "PC-7", "API-2", "API-5", "API-6", "LCX-1", "UD-1", "UD-2", "COR-1", "CONT-1", "CONT-4"},
	trace.Returned:     {"UD-1", "UD-2", "CB-3", "PC-4", "PC-6"},
	trace.PassCount:    {"PC-1", "PC-2", "PC-3", "PC-4", "PC-5", "PC-6", "PC-8", "CB-3", "AGT-1"},
	trace.Continue:     {"CONT-1", "CONT-2", "CONT-3", "PC-4"},
	trace.Local:        {"LCX-2", "LCX-3", "LCX-7", "SVC-1"},
	trace.Record:       {"CB-4", "DID-2", "DID-4", "DID-5", "COR-2", "COR-3", "LCX-3", "LCX-4", "LCX-6", "SVC-1", "SVC-2", "SVC-3", "AGT-1"},
	trace.Correlation:  {"COR-3"},
	trace.ToolDispatch: {"DID-3", "LCX-6"},
	trace.ToolComplete: {"DID-3"},
	trace.ToolMemory:   {"MEM-2", "MEM-3", "MEM-4", "ACT-4"},
	trace.ToolSignal:   {"CMP-2"},
	trace.APICall:      {"COR-1", "COR-2"},
	trace.DispatchID:   {"DID-1", "DID-3"},
	trace.Snapshot:     {"MEM-1", "MEM-4", "MEM-5", "ACT-4"},
	trace.Restore:      {"MEM-2", "MEM-3", "MEM-5"},
	trace.Warning:      {"PC-6", "ACT-6", "MEM-5", "SVC-3"},
	trace.NeverEnded:   {"CMP-4", "CONT-3"},
	trace.AgentInfo:    {"AGT-1", "SVC-3"},
	trace.Kernel:       {"MEM-2", "MEM-3", "MEM-6", "CB-4", "DID-1", "DID-4", "CMP-2"},
	trace.Signal:       {"CMP-1", "CMP-2"},
	trace.MemRead:      {"MEM-1", "MEM-4"},
	trace.MemWrite:     {"MEM-2", "MEM-5"},
	trace.AppAlloc:     {"MEM-4", "ACT-4"},
	trace.AppFree:      {"MEM-4"},
	trace.AppDispatch:  {"ACT-1", "ACT-6", "API-5", "DID-3", "MEM-6"},
	trace.AppComplete:  {"CMP-1", "CMP-2"},
	trace.AppReadback:  {"CMP-3", "MEM-3"},
	trace.AppMemory:    {"MEM-3"},
	trace.AppTimeout:   {"CMP-4", "CMP-1"},
	trace.AppSignal:    {"CMP-1", "CMP-4"},
}
