package rules

import "strings"

var families = []string{"API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP", "COR", "LCX", "SVC", "AGT", "RPV"}

func r(id, text string) Rule {
	fam, _, _ := strings.Cut(id, "-")
	return Rule{ID: id, Family: fam, Text: text}
}

// catalogue restates each rule briefly; RULES.md stays the authority.
var catalogue = []Rule{
	r("API-1", "replay is switched on by subscribing to the KERNEL_REPLAY callback tracing domain; no dedicated counting service, environment variable or pass option exists"),
	r("API-2", "the domain has exactly the operations NONE(0), CONFIG(1), PASS(2), LAST(3), and CONFIG and PASS each deliver an ENTER and an EXIT phase"),
	r("API-3", "snapshot and restore are not operations: any operation id from 3 upward is unknown"),
	r("API-4", "the domain resolves an operation's name from its id and its id from its name, and says not-found for anything else"),
	r("API-5", "a single flat payload carries both operations; its size field is the size of the whole payload, so a member is present when its offset is within it, and the SDK always fills dispatch_info"),
	r("API-6", "CONFIG callbacks see zero pass fields and no local context callbacks; PASS callbacks see the tool's callback pointers zeroed"),
	r("API-7", "replay and ordinary dispatch counter collection can be configured in the same run"),

	r("ACT-1", "a dispatch becomes a replay candidate only while an active context traces KERNEL_REPLAY including CONFIG"),
	r("ACT-2", "an all-operations subscription (null list, zero count) includes CONFIG"),
	r("ACT-3", "a PASS-only subscription, or a replay context never started or already stopped, triggers no CONFIG, no PASS and just one plain run"),
	r("ACT-4", "the allocation tracker runs only once the replay domain is configured; otherwise it costs nothing per allocation or dispatch"),
	r("ACT-5", "only one context may configure KERNEL_REPLAY; a later configuration fails with ERROR_SERVICE_ALREADY_CONFIGURED"),
	r("ACT-6", "only a one-packet kernel dispatch is replayed; multi-packet submissions and graph launches run once, with a single warning per process"),

	r("CB-1", "each candidate dispatch gets one CONFIG ENTER and one CONFIG EXIT, which closes the window after the last pass (immediately when not replayed)"),
	r("CB-2", "each executed pass gets one PASS ENTER followed by one PASS EXIT, passes never overlapping"),
	r("CB-3", "replay_pass_count is called at most once per dispatch, after CONFIG ENTER has returned and before any pass"),
	r("CB-4", "the loop, its callbacks and the service callbacks of each pass run on the submitting thread inside the pass, so a pass index published at PASS ENTER is seen by that pass only"),

	r("UD-1", "the user data written at CONFIG ENTER is the one value handed to every PASS callback, replay_pass_count and replay_continue of that dispatch, and to no other dispatch"),
	r("UD-2", "each pass begins with the CONFIG value again; a write during a pass reaches only that pass's EXIT and continue call"),

	r("PC-1", "with no replay_pass_count installed the dispatch is not replayed: it runs once and nothing is snapshotted"),
	r("PC-2", "a pass count of 1 means no replay: CONFIG ENTER and EXIT only, no PASS, no snapshot or restore, one run"),
	r("PC-3", "a pass count N > 1 without replay_continue runs exactly N passes"),
	r("PC-4", "a pass count N > 1 with replay_continue runs at most N passes; continue may stop early but never extend"),
	r("PC-5", "a pass count of 0 with replay_continue loops until continue answers 0, and total_passes reads 0 in every PASS"),
	r("PC-6", "a pass count of 0 without replay_continue is refused with a warning (printed once per process) and the dispatch runs once"),
	r("PC-7", "current_pass counts from 0 without gaps, and total_passes equals N in a fixed loop"),
	r("PC-8", "only the tool decides the pass count; nothing in the environment overrides it"),

	r("CONT-1", "replay_continue is asked after a pass's PASS EXIT; a non-zero answer runs another pass and zero ends the loop"),
	r("CONT-2", "a fixed loop of N passes consults continue only after passes 0 to N-2, never after its last pass"),
	r("CONT-3", "an indefinite loop consults continue after every pass, including the pass that ends it"),
	r("CONT-4", "every executed pass gets its PASS EXIT, in fixed and indefinite loops alike"),

	r("MEM-1", "a replayed dispatch saves device memory once before its first pass; a dispatch that is not replayed saves nothing"),
	r("MEM-2", "device memory is written back before each pass after the first, so every pass starts from the pre-dispatch memory"),
	r("MEM-3", "no restore follows the last executed pass, leaving memory as one ordinary run of the kernel would"),
	r("MEM-4", "the snapshot covers tracked coarse-grained device allocations and writable device globals only, skips regions freed since, and drains queue and agent first"),
	r("MEM-5", "an incomplete snapshot makes the SDK warn and run the dispatch once; a partly failed restore is fatal"),
	r("MEM-6", "while a dispatch replays on an agent no other dispatch runs on that agent; a dispatch the tool writes inside a replay window is a candidate like any other: declined (reentrant_dispatch) and run once inside the pass on an agent whose window its thread has open, in a window of its own nested in the pass on another agent"),

	r("DID-1", "one dispatch id is reserved per logical dispatch before CONFIG and reused by every pass or by the single plain run"),
	r("DID-2", "replay_pass_count, every CONFIG and PASS callback and every record of every pass carry the reserved dispatch id"),
	r("DID-3", "the dispatch id counter advances once per logical dispatch, so ids are unique and consecutive"),
	r("DID-4", "each pass has its own kernel start/end timestamps in dispatch traces and counter records, differing between passes"),
	r("DID-5", "passes of a dispatch are distinguished by their pass index (replay_pass in JSON), never by dispatch id"),

	r("CMP-1", "the application sees one completion, no more and no less, for every replay loop that ends"),
	r("CMP-2", "the application's completion signal is withheld during passes and fires once after the loop, after CONFIG EXIT"),
	r("CMP-3", "fixed, early-ended and ended indefinite loops look the same to the application"),
	r("CMP-4", "an indefinite loop whose continue never answers 0 never completes, and the harness reports it without hanging"),

	r("COR-1", "thread, internal and ancestor correlation ids are captured once per window and are identical in CONFIG and every PASS"),
	r("COR-2", "records come once per pass with the same correlation and dispatch ids and their own timestamps"),
	r("COR-3", "the external correlation id is whatever the tool's callback answered for that submit, so it may change per pass"),

	r("LCX-1", "the PASS payload provides replay_start_context and replay_stop_context"),
	r("LCX-2", "local start/stop is legal only in PASS ENTER; elsewhere it returns ERROR_CONTEXT_ERROR and has no effect"),
	r("LCX-3", "a local start or stop persists across the following passes of the loop until reversed"),
	r("LCX-4", "when the loop ends every context is back in its pre-replay state"),
	r("LCX-5", "local start/stop only masks already-started contexts: it creates nothing, starts or stops nothing globally, changes no global state"),
	r("LCX-6", "a local toggle affects only its own loop, never another dispatch, even one submitted concurrently from another thread"),
	r("LCX-7", "a context inactive when the loop began can be neither started nor stopped locally (ERROR_CONTEXT_NOT_STARTED); overrides are per thread and per loop, last call wins"),

	r("SVC-1", "dispatch counters, SPM, kernel dispatch tracing and dispatch thread trace obey local toggles: counters and SPM obey stop and start; tracing and thread trace skip a pass while locally stopped, a later local start ends the stop, and a start never makes them collect where they otherwise would not"),
	r("SVC-2", "PC sampling and device counting ignore local toggles and collect on every pass, though the local call succeeds"),
	r("SVC-3", "on MI2xx/MI3xx dispatch counters and PC sampling never share a pass, and thread trace never shares a pass with SPM"),

	r("AGT-1", "a pass count taken from the dispatch's agent maps pass i to that agent's counter group i, without wrapping or skipping"),

	r("RPV-1", "rocprofv3 --replay-mode kernel fails with a diagnostic unless --pmc and --kernel-replay-beta-enabled are given"),
	r("RPV-2", "the rocprofv3 tool creates its replay context only when kernel replay mode is requested"),
	r("RPV-3", "rocprofv3 has no pass-count option: the count is the number of counter groups on the dispatch's agent"),
	r("RPV-4", "rocprofv3 kernel replay installs neither replay_continue nor the local context callbacks"),
	r("RPV-5", "without kernel replay mode, several --pmc groups re-run the whole application once per group"),
	r("RPV-6", "JSON counter records carry replay_pass, while counter_collection.csv has no Replay_Pass column"),
	r("RPV-7", "kernel replay refuses thread trace, PC sampling and SPM with a diagnostic naming the conflict, and warns that kernel tracing and stats see one record per pass"),
	r("RPV-8", "in JSON output each replayed dispatch id has replay_pass 0..N-1 once per counter group, ids are non-zero and contiguous, and pass-independent counters agree across passes"),
	r("RPV-9", "rocprofv3's output files are its writer's: CSV text quoted and numbers bare, counter values in %.6f/%.8e, agents named Agent N, results.json's key order and filled name tables, so a consumer of real output reads them without a special case"),
}
