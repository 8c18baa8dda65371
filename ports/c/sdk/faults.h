/* Planted faults: compile with -DKRS_FAULT_<NAME> (one at a time) to break
 * one rule on purpose. The fault matrix of the reference engine
 * (docs/faults.md), planted in the C port; `make -C ports/c faults` builds a
 * driver per fault and requires the suite to name the rule each breaks
 * (docs/ports.md). Never defined in the normal build.
 *
 *   COMPLETION_EVERY_PASS          the application's signal rides every pass      CMP-1, CMP-2
 *   COMPLETION_BEFORE_CONFIG_EXIT  completion fires before CONFIG EXIT            CMP-2
 *   DISPATCH_ID_PER_PASS           a fresh dispatch id for every pass             DID-1, DID-2, DID-3
 *   CONTINUE_AFTER_LAST_PASS       a fixed loop consults continue after pass N-1  CONT-2
 *   SKIP_RESTORE                   no restore between passes                      MEM-2, MEM-3
 *   RESTORE_AFTER_LAST_PASS        memory restored after the last pass too        MEM-3
 *   LOCAL_TOGGLE_LEAKS             a local override outlives its loop             LCX-4
 *   USER_DATA_NOT_RESEEDED         a pass's write carries into the next pass      UD-2
 *   EXTERNAL_CORRELATION_REUSED    external id asked once per loop, not per pass  COR-3
 *   SNAPSHOT_WHEN_NOT_REPLAYED     a snapshot for a dispatch run once             MEM-1
 *   PASS_COUNT_CALLED_TWICE        replay_pass_count called twice                 CB-3
 *   SKIP_LAST_PASS_EXIT            the last pass has no PASS EXIT                 CB-2, CONT-4
 *   INDEFINITE_TOTAL_NON_ZERO      total_passes non-zero in an indefinite loop    PC-5
 *   PASS_FIELDS_IN_CONFIG          pass fields set during CONFIG                  API-6
 *   IGNORE_CONTINUE                continue's 0 does not end a fixed loop         PC-4
 *   CORRELATION_PER_PASS           a new internal correlation id every pass       COR-1
 *   NO_AGENT_LOCK                  plain dispatches run during a loop             MEM-6
 *   LOCAL_TOGGLE_ANYWHERE          local calls succeed outside PASS ENTER         LCX-2
 *   PC_SAMPLING_HONOURS_STOP       agent-wide services obey a local stop          SVC-2
 *   REPLAY_SINGLE_PASS             a count of 1 still runs a replay loop          PC-2
 *   ACTIVATE_WITHOUT_CONFIG        a PASS-only subscription activates replay      ACT-3
 *   REPLAY_ZERO_WITHOUT_CONTINUE   0 without continue loops (budget-bounded)      PC-6
 *   WARN_EVERY_TIME                warnings printed every time, not once          PC-6, ACT-6
 *   REUSE_FIRST_PASS_TIMESTAMPS    every pass reports pass 0's timestamps         DID-4
 *   LOCAL_START_NOT_STARTED_ALLOWED local start of an inactive context succeeds   LCX-7
 *   SNAPSHOT_SILENTLY              memory saved but no snapshot reported          MEM-1
 *   RESTORE_MISREPORTED            a restore reports bytes it did not write       MEM-2
 *   SNAPSHOT_UNSAVED_KINDS         fine, host and kernarg memory saved too        MEM-4
 *   SNAPSHOT_SKIPS_BUFFER          the newest device buffer is not saved          MEM-4, MEM-2
 *   PAYLOAD_SIZE_SHORT             size stops short of the whole payload          API-5
 *   DISPATCH_INFO_GRID             dispatch_info carries the workgroup as grid    API-5
 *   USER_DATA_WRITE_LOST           a pass's write is lost before its EXIT         UD-2
 *   REPLAY_MULTI_PACKET            a multi-packet submission's kernel replayed    ACT-6
 *   ACTIVATE_UNSTARTED             a configured, never-started context activates  ACT-3
 *   TOOL_DISPATCH_NOT_CANDIDATE    the tool's dispatch in a window gets no CONFIG MEM-6
 *   REPLAY_REENTRANT               replayed on its own window's agent, not declined MEM-6
 *   DECLINE_NESTED                 declined on another agent, no window of its own MEM-6
 */
#ifndef KRS_FAULTS_H
#define KRS_FAULTS_H
#endif
