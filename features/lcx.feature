@LCX
Feature: Local context control inside a replay loop
  As a pass begins, the tool may stop or start, for this loop only, contexts
  that were already started before the loop. Such a choice holds on later
  passes until changed, ends with the loop, touches no global state and no
  other dispatch.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the tool traces kernel dispatches in a context "timing"
    And the application has a buffer "x" of 64 elements filled with 0

  @LCX-1
  Scenario: every pass offers the local start and stop functions
    Given the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then every PASS callback offers the local start and stop functions
    And the rule checks find nothing wrong

  @LCX-3 @SVC-1
  Scenario: a local stop in pass 1 is still in force in pass 3
    Given the tool asks for 4 passes
    And in pass 1 the tool stops "timing" locally
    When the application dispatches "increment" on "x"
    Then "timing" delivers kernel trace records for passes 0 only
    And the local stop of "timing" in PASS ENTER of pass 1 returns SUCCESS
    And the rule checks find nothing wrong

  @LCX-3 @SVC-1
  Scenario: counters stopped in one pass come back when started again in a later pass
    Given the tool collects the counters SQ_WAVES in a context "counters"
    And the tool asks for 4 passes
    And in pass 1 the tool stops "counters" locally
    And in pass 3 the tool starts "counters" locally
    When the application dispatches "increment" on "x"
    Then "counters" delivers counter records for passes 0 and 3 of "increment"
    And the rule checks find nothing wrong

  @LCX-4 @LCX-5
  Scenario: once the loop ends, every context is as it was before the loop
    Given the tool asks for 3 passes
    And in every pass the tool stops "timing" locally
    When the application dispatches "increment" on "x" as "before"
    And the tool declines to replay "before"
    And the application dispatches "increment" on "x" as "replayed"
    And the application dispatches "increment" on "x" as "ordinary"
    And the tool declines to replay "ordinary"
    Then "timing" delivers a kernel trace record for "before"
    And "timing" delivers no kernel trace records for "replayed"
    And "timing" delivers a kernel trace record for "ordinary"
    And no global start or stop of a context happens inside the loop
    And the tool created 2 contexts and no more
    And the rule checks find nothing wrong

  @LCX-2
  Scenario Outline: a local toggle outside the start of a pass is refused and changes nothing
    Given the tool asks for 2 passes
    And the tool tries to stop "timing" locally <where>
    When the application dispatches "increment" on "x"
    Then the local stop of "timing" from <window> returns ERROR_CONTEXT_ERROR
    And "timing" delivers kernel trace records for passes 0 and 1
    And the rule checks find nothing wrong

    Examples:
      | where                                 | window      |
      | while the dispatch is configured      | CONFIG ENTER |
      | as the dispatch's configuration ends  | CONFIG EXIT  |
      | as a pass ends                        | PASS EXIT    |

  @LCX-7
  Scenario: a context that was never started cannot be started locally
    Given the tool traces kernel dispatches in a context "later"
    And the tool configures "later" but never starts it
    And the tool asks for 2 passes
    And in pass 0 the tool starts "later" locally
    When the application dispatches "increment" on "x"
    Then the local start of "later" in PASS ENTER of pass 0 returns ERROR_CONTEXT_NOT_STARTED
    And "later" delivers no kernel trace records in any pass
    And the rule checks find nothing wrong

  @LCX-7
  Scenario: a context that was never started cannot be stopped locally either
    Given the tool traces kernel dispatches in a context "later"
    And the tool configures "later" but never starts it
    And the tool asks for 2 passes
    And in pass 0 the tool stops "later" locally
    When the application dispatches "increment" on "x"
    Then the local stop of "later" in PASS ENTER of pass 0 returns ERROR_CONTEXT_NOT_STARTED
    And "later" delivers no kernel trace records in any pass
    And "timing" delivers kernel trace records for passes 0 and 1
    And the rule checks find nothing wrong

  @LCX-7
  Scenario: within a pass, the last call for a context wins
    Given the tool asks for 2 passes
    And in pass 0 the tool stops "timing" locally
    And in pass 0 the tool starts "timing" locally
    When the application dispatches "increment" on "x"
    Then the local stop of "timing" in PASS ENTER of pass 0 returns SUCCESS

  @LCX-6 @MEM-6
  Scenario: a local stop on one thread leaves another thread's dispatch alone while it replays
    Given a machine with an MI200 agent as well
    And the application has a buffer "y" of 64 elements filled with 0 on the MI200 agent
    And the tool asks for 3 passes
    And in every pass the tool stops "timing" locally
    When the application dispatches "increment" on "x" as "replayed"
    And meanwhile, thread 2 dispatches "increment" on "y" on the MI200 agent as "other" while "replayed" is in pass 1
    And the tool declines to replay "other"
    Then "timing" delivers no kernel trace records in any pass
    And "timing" delivers a kernel trace record for "other"
    And the rule checks find nothing wrong

  @LCX-4 @fault
  Scenario: an engine whose local stop outlives the loop is caught
    Given the engine has the planted fault local_toggle_leaks
    And the tool asks for 3 passes
    And in every pass the tool stops "timing" locally
    When the application dispatches "increment" on "x" as "before"
    And the tool declines to replay "before"
    And the application dispatches "increment" on "x" as "replayed"
    And the application dispatches "increment" on "x" as "ordinary"
    And the tool declines to replay "ordinary"
    Then the checks report a violation of LCX-4

  @LCX-2 @fault
  Scenario: an engine that accepts local toggles anywhere is caught
    Given the engine has the planted fault local_toggle_anywhere
    And the tool asks for 2 passes
    And the tool tries to stop "timing" locally as a pass ends
    When the application dispatches "increment" on "x"
    Then the checks report a violation of LCX-2

  @LCX-7 @fault
  Scenario: an engine that lets a never-started context be started locally is caught
    Given the engine has the planted fault local_start_not_started_allowed
    And the tool traces kernel dispatches in a context "later"
    And the tool configures "later" but never starts it
    And the tool asks for 2 passes
    And in pass 0 the tool starts "later" locally
    When the application dispatches "increment" on "x"
    Then the checks report a violation of LCX-7

  @LCX-4 @LCX-3
  Scenario: the next loop on the thread starts with every context as it was before any override
    Given the tool asks for 3 passes
    And in pass 1 of "first", the tool stops "timing" locally
    When the application dispatches "increment" on "x" as "first"
    And the application dispatches "increment" on "x" as "next"
    Then "timing" delivers kernel trace records for passes 0 only of "first"
    And "timing" delivers kernel trace records for passes 0, 1 and 2 of "next"
    And the rule checks find nothing wrong

  @LCX-4 @fault
  Scenario: an engine that starts the next loop with the last loop's override is caught
    Given the engine has the planted fault local_override_next_loop
    And the tool asks for 3 passes
    And in pass 1 of "first", the tool stops "timing" locally
    When the application dispatches "increment" on "x" as "first"
    And the application dispatches "increment" on "x" as "next"
    Then the checks report a violation of LCX-4

  @LCX-6 @MEM-6
  Scenario: a local stop on one thread leaves another thread's loop alone while both replay
    Given a machine with an MI200 agent as well
    And the application has a buffer "y" of 64 elements filled with 0 on the MI200 agent
    And the application has a buffer "w" of 64 elements filled with 0 on the MI200 agent
    And the tool asks for 4 passes
    And in every pass of "replayed", the tool stops "timing" locally
    When the application dispatches "increment" on "x" as "replayed"
    And meanwhile, thread 2 dispatches "increment" on "y" on the MI200 agent as "other" while "replayed" is in pass 1
    And thread 3 dispatches "increment" on "w" on the MI200 agent as "warm"
    And the tool declines to replay "warm"
    Then "timing" delivers no kernel trace records for "replayed"
    And "timing" delivers kernel trace records for passes 0, 1, 2 and 3 of "other"
    And the rule checks find nothing wrong

  @LCX-6 @fault
  Scenario: an engine that keeps one local override for the whole process is caught
    Given the engine has the planted fault local_override_per_process
    And a machine with an MI200 agent as well
    And the application has a buffer "y" of 64 elements filled with 0 on the MI200 agent
    And the application has a buffer "w" of 64 elements filled with 0 on the MI200 agent
    And the tool asks for 4 passes
    And in every pass of "replayed", the tool stops "timing" locally
    When the application dispatches "increment" on "x" as "replayed"
    And meanwhile, thread 2 dispatches "increment" on "y" on the MI200 agent as "other" while "replayed" is in pass 1
    And thread 3 dispatches "increment" on "w" on the MI200 agent as "warm"
    And the tool declines to replay "warm"
    Then the checks report a violation of LCX-6

  @LCX-3 @SVC-1
  Scenario: a context stopped in the first pass and started in the next records again, though the loop never saw it record
    Given the tool asks for 3 passes
    And in pass 0 of "looped", the tool stops "timing" locally
    And in pass 1 of "looped", the tool starts "timing" locally
    When the application dispatches "increment" on "x" as "plain"
    And the tool declines to replay "plain"
    And the application dispatches "increment" on "x" as "looped"
    Then "timing" delivers kernel trace records for passes 1 and 2 of "looped"
    And the rule checks find nothing wrong

  @SVC-1 @fault
  Scenario: an engine whose local start does not end an earlier local stop is caught without a word from the spec
    Given the engine has the planted fault local_start_ignored
    And the tool asks for 3 passes
    And in pass 0 of "looped", the tool stops "timing" locally
    And in pass 1 of "looped", the tool starts "timing" locally
    When the application dispatches "increment" on "x" as "plain"
    And the tool declines to replay "plain"
    And the application dispatches "increment" on "x" as "looped"
    Then the checks report a violation of SVC-1

  @LCX-6
  Scenario: the tool's own dispatch from inside a loop is not masked by the loop's override
    Given the application has a fine-grained buffer "t" of 16 elements filled with 0
    And the tool asks for 3 passes
    And in pass 0 of "main", the tool stops "timing" locally
    And as pass 1 begins, the tool writes "fill" with 7 on "t" of its own as "side"
    When the application dispatches "increment" on "x" as "plain"
    And the tool declines to replay "plain"
    And the application dispatches "increment" on "x" as "main"
    Then "timing" delivers no kernel trace records for "main"
    And the tool's own dispatch "side" gets one kernel trace record from "timing"
    And the buffer "t" holds 7 in every element
    And the rule checks find nothing wrong

  @LCX-6 @fault
  Scenario: an engine that prepares the tool's own dispatch under the loop's override is caught
    Given the engine has the planted fault tool_dispatch_masked
    And the application has a fine-grained buffer "t" of 16 elements filled with 0
    And the tool asks for 3 passes
    And in pass 0 of "main", the tool stops "timing" locally
    And as pass 1 begins, the tool writes "fill" with 7 on "t" of its own as "side"
    When the application dispatches "increment" on "x" as "plain"
    And the tool declines to replay "plain"
    And the application dispatches "increment" on "x" as "main"
    Then the checks report a violation of LCX-6
