@MEM
Feature: Device memory is saved before a loop and restored between passes
  Kernels that are not idempotent show at once whether every pass started
  from the memory the application left: an increment replayed three times
  without a restore leaves three increments.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay

  @MEM-1 @MEM-2 @MEM-3
  Scenario: a non-idempotent kernel replayed three times leaves one run's result
    Given the application has a buffer "x" of 256 elements filled with 7
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then memory is saved once, before the first pass
    And memory is restored before passes 1 and 2 only
    And every pass starts from the memory the application left before the dispatch
    And the buffer "x" holds 8 in every element
    And the rule checks find nothing wrong

  @MEM-3 @PC-4
  Scenario: an early exit breaks before the restore
    Given the application has a buffer "y" of 128 elements filled with 1
    And the application has a buffer "x" of 128 elements filled with 2
    And the tool asks for 5 passes and stops after pass 1
    When the application dispatches "saxpy" with 3 on "y" and "x"
    Then passes 0 and 1 run
    And memory is restored before pass 1 only
    And the buffer "y" holds the result of one run
    And the rule checks find nothing wrong

  @MEM-1
  Scenario Outline: a dispatch that is not replayed takes no snapshot
    Given the application has a buffer "x" of 64 elements filled with 1
    And the tool's replay_pass_count <replay_pass_count>
    When the application dispatches "increment" on "x"
    Then no memory is saved or restored
    And the rule checks find nothing wrong

    Examples:
      | replay_pass_count |
      | is left unset     |
      | returns 1         |

  @MEM-4 @ACT-4
  Scenario: only device memory is saved; fine-grained memory shows every pass
    Given the application has a device buffer "dev" of 64 elements filled with 0
    And the application has a fine-grained buffer "fine" of 64 elements filled with 0
    And the application has a host buffer "host" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "dev" as "on-device"
    And the application dispatches "increment" on "fine" as "on-fine"
    Then the snapshot of "on-device" saves 1 region of device memory
    And the buffer "dev" holds 1 in every element
    And the buffer "fine" holds 3 in every element
    And the rule checks find nothing wrong

  @MEM-4
  Scenario: a freed buffer leaves the tracker
    Given the application has a buffer "tmp" of 64 elements filled with 0
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 2 passes
    And the application frees "tmp" once "first" has completed
    When the application dispatches "increment" on "tmp" as "first"
    And the application dispatches "increment" on "x" as "second"
    Then the snapshot of "first" saves 2 regions of device memory
    And the snapshot of "second" saves 1 region of device memory
    And the rule checks find nothing wrong

  @MEM-5
  Scenario: a snapshot that cannot be completed means one run without replay, with a warning
    Given the machine cannot save more than 512 bytes of device memory at once
    And the application has a buffer "x" of 1024 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the SDK warns "snapshot_incomplete" once
    And the dispatch is not replayed: it runs once, and no memory is saved
    And the application sees one completion
    And the buffer "x" holds 1 in every element
    And the rule checks find nothing wrong

  @MEM-5
  Scenario: a restore that fails part-way stops the run rather than give a wrong result
    Given the machine fails part-way through its restore number 1
    And the application has a buffer "x" of 64 elements filled with 0
    And the application has a buffer "y" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "accumulate" on "x" and "y"
    Then the run stops with an error mentioning "restore"
    And the application never reads back a result of "accumulate"

  @MEM-6
  Scenario: while one thread replays on an agent, another thread's dispatch waits for the loop
    Given the application has a buffer "x" of 64 elements filled with 0
    And the application has a buffer "y" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "looping"
    And meanwhile, thread 2 dispatches "increment" on "y" as "plain" while "looping" is in pass 1
    And the tool declines to replay "plain"
    Then "plain" runs on the agent only after "looping"'s loop has ended
    And the buffer "x" holds 1 in every element
    And the buffer "y" holds 1 in every element
    And the rule checks find nothing wrong

  @MEM-2 @MEM-3 @fault
  Scenario: an engine that skips the restore is caught by the memory the passes see
    Given the engine has the planted fault skip_restore
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report violations of MEM-2 and MEM-3

  @MEM-3 @fault
  Scenario: an engine that restores after the last pass is caught
    Given the engine has the planted fault restore_after_last_pass
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of MEM-3

  @MEM-1 @fault
  Scenario: an engine that snapshots a dispatch it does not replay is caught
    Given the engine has the planted fault snapshot_when_not_replayed
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 1 pass
    When the application dispatches "increment" on "x"
    Then the checks report a violation of MEM-1

  @MEM-6 @fault
  Scenario: an engine that lets another dispatch onto the replaying agent is caught
    Given the engine has the planted fault no_agent_lock
    And the application has a buffer "x" of 64 elements filled with 0
    And the application has a buffer "y" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "looping"
    And meanwhile, thread 2 dispatches "increment" on "y" as "plain" while "looping" is in pass 1
    And the tool declines to replay "plain"
    Then the checks report a violation of MEM-6

  # The SDK's own account of snapshots and restores is checked against the
  # memory traffic the runtime saw.
  @MEM-1 @fault
  Scenario: an engine that snapshots a dispatch it does not replay, and says nothing, is caught by the runtime
    Given the engine has the planted fault snapshot_silently
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 1 pass
    When the application dispatches "increment" on "x"
    Then the checks report a violation of MEM-1

  @MEM-2 @fault
  Scenario: an engine that restores other bytes than it says is caught by the runtime
    Given the engine has the planted fault restore_misreported
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of MEM-2

  @MEM-4 @fault
  Scenario: an engine that saves fine-grained memory is caught by what the runtime read
    Given the engine has the planted fault snapshot_unsaved_kinds
    And the application has a buffer "x" of 64 elements filled with 0
    And the application has a fine-grained buffer "f" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "accumulate" on "x" and "f"
    Then the checks report a violation of MEM-4

  @MEM-4 @fault
  Scenario: an engine that leaves a device buffer out of its snapshot is caught
    Given the engine has the planted fault snapshot_skips_buffer
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of MEM-4

  # A dispatch the tool writes from inside a replay window (clarified
  # 2026-12-01) is a candidate like any other: CONFIG fires for it on the
  # window's thread. On the window's own agent the SDK declines it and it
  # runs once, at once, inside the pass; on another agent it opens a window
  # of its own there, nested in the pass.
  @MEM-6
  Scenario: a dispatch the tool writes on the agent its loop holds is declined and runs once inside the pass
    Given the application has a buffer "x" of 64 elements filled with 1
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "main"
    And in pass 1 of "main" the tool writes "fill" with 9 on "x" as "side"
    Then "side" gets its own CONFIG, on the thread of "main", before it runs
    And "side" is not replayed: it runs once, and no memory is saved
    And the SDK warns "reentrant_dispatch" once
    And "side" runs inside pass 1 of "main"
    And "main" runs exactly 3 passes
    And the buffer "x" holds 2 in every element
    And the rule checks find nothing wrong

  @MEM-6
  Scenario: a dispatch the tool writes on another agent opens a window of its own, nested in the pass
    Given a machine with an MI200 agent as well
    And the application has a buffer "x" of 64 elements filled with 1
    And the application has a buffer "y" of 64 elements filled with 10 on the MI200 agent
    And the tool asks for 3 passes
    And the tool asks for 2 passes for "side"
    When the application dispatches "increment" on "x" as "main"
    And in pass 1 of "main" the tool writes "increment" on "y" on the MI200 agent as "side"
    Then "side" gets its own CONFIG, on the thread of "main", before it runs
    And "side" runs exactly 2 passes
    And "side" opens its window inside pass 1 of "main", which goes on after it closes
    And "main" runs exactly 3 passes
    And the SDK prints no warning
    And the buffer "x" holds 2 in every element
    And the buffer "y" holds 11 in every element
    And the rule checks find nothing wrong

  @MEM-6 @CB-4
  Scenario: a dispatch the tool writes from a service record within a pass is a candidate too
    Given the application has a buffer "x" of 64 elements filled with 1
    And the tool traces kernel dispatches in a context "timing"
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "main"
    And as the first record of pass 0 of "main" arrives, the tool writes "fill" with 9 on "x" as "side"
    Then "side" gets its own CONFIG, on the thread of "main", before it runs
    And "side" is not replayed: it runs once, and no memory is saved
    And "side" runs inside pass 0 of "main"
    And every pass starts from the memory the application left before the dispatch
    And the buffer "x" holds 2 in every element
    And the rule checks find nothing wrong

  @MEM-6 @fault
  Scenario: an engine that gives the tool's own dispatch no CONFIG is caught
    Given the engine has the planted fault tool_dispatch_not_candidate
    And the application has a buffer "x" of 64 elements filled with 1
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "main"
    And in pass 1 of "main" the tool writes "fill" with 9 on "x" as "side"
    Then the checks report a violation of MEM-6

  @MEM-6 @fault
  Scenario: an engine whose declined dispatch waits for the window its own thread holds is caught
    Given the engine has the planted fault wait_on_own_window
    And the application has a buffer "x" of 64 elements filled with 1
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "main"
    And in pass 1 of "main" the tool writes "fill" with 9 on "x" as "side"
    Then the checks report a violation of MEM-6

  @MEM-6 @fault
  Scenario: an engine that declines the tool's dispatch on another agent is caught
    Given the engine has the planted fault decline_nested
    And a machine with an MI200 agent as well
    And the application has a buffer "x" of 64 elements filled with 1
    And the application has a buffer "y" of 64 elements filled with 10 on the MI200 agent
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "main"
    And in pass 1 of "main" the tool writes "increment" on "y" on the MI200 agent as "side"
    Then the checks report a violation of MEM-6

  @MEM-6 @fault
  Scenario: an engine that replays the tool's dispatch in a window of its own on its loop's agent is caught
    Given the engine has the planted fault replay_reentrant
    And the application has a buffer "x" of 64 elements filled with 1
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "main"
    And in pass 1 of "main" the tool writes "fill" with 9 on "x" as "side"
    Then the checks report a violation of MEM-6

  @MEM-4 @MEM-2
  Scenario: a restore skips a buffer freed during the loop, whatever now lives where it was
    Given the application has a buffer "x" of 64 elements filled with 1
    And the application has a buffer "y" of 1024 elements filled with 3
    And the tool asks for 3 passes
    And as pass 0 ends, the tool frees "y" and allocates "z" in its place, filled with 9
    When the application dispatches "increment" on "x"
    Then the buffer "x" holds 2 in every element
    And the buffer "z" holds 9 in every element
    And the rule checks find nothing wrong

  @MEM-4 @fault
  Scenario: an engine that restores a freed region by its address is caught
    Given the engine has the planted fault restore_into_freed
    And the application has a buffer "x" of 64 elements filled with 1
    And the application has a buffer "y" of 1024 elements filled with 3
    And the tool asks for 3 passes
    And as pass 0 ends, the tool frees "y" and allocates "z" in its place, filled with 9
    When the application dispatches "increment" on "x"
    Then the checks report a violation of MEM-4

  @MEM-4
  Scenario: kernel-argument memory is not saved
    Given the application has a buffer "y" of 64 elements filled with 1
    And the application has a kernel-argument buffer "k" of 64 elements filled with 4
    And the tool asks for 3 passes
    When the application dispatches "accumulate" on "y" and "k"
    Then the snapshot saves 1 region of device memory
    And the buffer "y" holds 5 in every element
    And the buffer "k" holds 4 in every element
    And the rule checks find nothing wrong

  @MEM-4 @fault
  Scenario: an engine that saves kernel-argument memory is caught by what the runtime read
    Given the engine has the planted fault snapshot_saves_kernarg
    And the application has a buffer "y" of 64 elements filled with 1
    And the application has a kernel-argument buffer "k" of 64 elements filled with 4
    And the tool asks for 3 passes
    When the application dispatches "accumulate" on "y" and "k"
    Then the checks report a violation of MEM-4
