@PC
Feature: The pass count decides whether and how a dispatch is replayed
  A tool opts a dispatch into replay by answering how many passes it needs.
  Its answer, together with whether it also installs a continue callback,
  decides everything: no replay, a fixed loop, a loop that may end early, an
  indefinite loop, or a refusal.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the application has a buffer "x" of 256 elements filled with 10

  # Each row is tagged with the rule it shows, so that a row passes only if
  # the oracles examined that rule in its trace.
  Scenario Outline: the pass-count table
    Given the tool's replay_pass_count <replay_pass_count>
    And the tool's replay_continue <replay_continue>
    When the application dispatches "increment" on "x"
    Then <behaviour>
    And the application sees one completion, after the last pass
    And the buffer "x" holds 11 in every element
    And the rule checks find nothing wrong

    @PC-1
    Examples: left unset, no replay
      | replay_pass_count | replay_continue    | behaviour                                                                   |
      | is left unset     | is ignored         | the dispatch is not replayed: it runs once, and no memory is saved          |

    @PC-2
    Examples: one pass, no replay
      | replay_pass_count | replay_continue    | behaviour                                                                   |
      | returns 1         | is ignored         | the dispatch is not replayed: it runs once, and no memory is saved          |

    @PC-3
    Examples: a fixed loop
      | replay_pass_count | replay_continue    | behaviour                                                                   |
      | returns 3         | is left unset      | exactly 3 passes run                                                        |

    @PC-4
    Examples: a fixed loop with continue
      | replay_pass_count | replay_continue    | behaviour                                                                   |
      | returns 5         | stops after pass 1 | passes 0 and 1 run                                                          |
      | returns 2         | always says go on  | passes 0 and 1 run                                                          |

    @PC-5
    Examples: an indefinite loop
      | replay_pass_count | replay_continue    | behaviour                                                                   |
      | returns 0         | stops after pass 3 | passes 0, 1, 2 and 3 run                                                    |

    @PC-6
    Examples: zero without continue, refused
      | replay_pass_count | replay_continue    | behaviour                                                                   |
      | returns 0         | is left unset      | the dispatch is not replayed: it runs once, and no memory is saved          |

  @PC-2
  Scenario: one pass takes the ordinary path, yet CONFIG still opens and closes
    Given the tool asks for 1 pass
    When the application dispatches "increment" on "x"
    Then CONFIG fires once, ENTER then EXIT, around every pass
    And no memory is saved or restored
    And the kernel runs once on the GPU
    And the rule checks find nothing wrong

  @PC-3 @PC-7
  Scenario: a fixed loop counts its passes from 0 and reports the total
    Given the tool asks for 4 passes
    When the application dispatches "increment" on "x"
    Then passes 0, 1, 2 and 3 run
    And every pass reports total passes 4
    And the kernel runs 4 times on the GPU
    And the rule checks find nothing wrong

  @PC-4 @CONT-1
  Scenario: continue can end a fixed loop early but never extend it
    Given the tool asks for 5 passes and stops after pass 2
    When the application dispatches "increment" on "x"
    Then passes 0, 1 and 2 run
    And continue is consulted after passes 0, 1 and 2
    And the application sees one completion, after the last pass
    And the buffer "x" holds the result of one run

  @PC-4
  Scenario: a continue that always says go on cannot stretch a fixed loop
    Given the tool asks for 3 passes and its continue always says go on
    When the application dispatches "increment" on "x"
    Then exactly 3 passes run
    And continue is consulted after passes 0 and 1
    And the rule checks find nothing wrong

  @PC-5
  Scenario: an indefinite loop reports no total
    Given the tool asks for an indefinite loop and stops after pass 4
    When the application dispatches "increment" on "x"
    Then passes 0, 1, 2, 3 and 4 run
    And every pass reports total passes 0
    And the rule checks find nothing wrong

  @PC-6
  Scenario: zero passes without a continue callback is refused with one warning for the whole process
    Given the tool asks for an indefinite loop but installs no continue callback
    When the application dispatches "increment" on "x"
    And the application then dispatches "increment" on "x"
    Then "increment" is not replayed: it runs once, and no memory is saved
    And "increment-2" is not replayed: it runs once, and no memory is saved
    And the SDK warns "pass_count_zero_without_continue" once
    And the buffer "x" holds 12 in every element
    And the rule checks find nothing wrong

  @PC-8
  Scenario: no environment variable overrides the tool's count
    Given the environment sets ROCPROFILER_KERNEL_REPLAY_PASSES to "7"
    And the environment sets ROCPROF_KERNEL_REPLAY_PASSES to "7"
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then exactly 2 passes run
    And the rule checks find nothing wrong

  # Planted faults: each breaks one row of the table; the PC oracle names it.

  @PC-2 @fault
  Scenario: an engine that replays a single pass is caught
    Given the engine has the planted fault replay_single_pass
    And the tool asks for 1 pass
    When the application dispatches "increment" on "x"
    Then the checks report a violation of PC-2

  @PC-4 @fault
  Scenario: an engine that ignores continue's stop is caught
    Given the engine has the planted fault ignore_continue
    And the tool asks for 5 passes and stops after pass 1
    When the application dispatches "increment" on "x"
    Then the checks report a violation of PC-4

  @PC-5 @fault
  Scenario: an engine that reports a total for an indefinite loop is caught
    Given the engine has the planted fault indefinite_total_nonzero
    And the tool asks for an indefinite loop and stops after pass 2
    When the application dispatches "increment" on "x"
    Then the checks report a violation of PC-5

  @PC-6 @fault
  Scenario: an engine that replays zero passes without continue is caught
    Given the engine has the planted fault replay_zero_without_continue
    And the tool asks for an indefinite loop but installs no continue callback
    When the application dispatches "increment" on "x"
    Then the checks report a violation of PC-6

  @PC-6 @fault
  Scenario: an engine that repeats its refusal warning on every dispatch is caught
    Given the engine has the planted fault warn_every_time
    And the tool asks for an indefinite loop but installs no continue callback
    When the application dispatches "increment" on "x"
    And the application then dispatches "increment" on "x"
    Then the checks report a violation of PC-6
