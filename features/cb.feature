@CB
Feature: Callback order and threading
  CONFIG opens the replay window once per dispatch and closes it after the
  last pass; each pass is an ENTER and an EXIT; the pass count is asked once.
  The whole loop runs on the thread that submitted the dispatch, so a pass
  index the tool publishes for its thread as a pass begins is what that
  pass's records see.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the tool traces kernel dispatches in a context "timing"
    And the application has a buffer "x" of 64 elements filled with 0

  @CB-1 @CB-2 @CB-3
  Scenario: CONFIG brackets the passes, each pass is an ENTER and an EXIT, the count is asked once
    Given the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then CONFIG fires once, ENTER then EXIT, around every pass
    And each pass opens with PASS ENTER and closes with PASS EXIT, in order
    And the pass count is asked once, after CONFIG ENTER and before the first pass
    And the rule checks find nothing wrong

  @CB-1
  Scenario: a declined dispatch gets CONFIG ENTER then EXIT, and then runs
    Given the tool leaves the pass count unset
    When the application dispatches "increment" on "x"
    Then CONFIG fires once, ENTER then EXIT, around every pass
    And the kernel runs once on the GPU
    And the rule checks find nothing wrong

  @CB-4
  Scenario: the loop runs on the submitting thread, and the published pass reaches the records
    Given the tool asks for 3 passes
    When the application dispatches "increment" on "x" as "replayed"
    And the application dispatches "increment" on "x" as "ordinary"
    And the tool declines to replay "ordinary"
    Then every replay callback, pass count and continue call runs on the thread that submitted the dispatch
    And each kernel trace record of the dispatch arrives inside its pass, on that thread, tagged with that pass
    And the kernel trace record of "ordinary" carries no pass index
    And the rule checks find nothing wrong

  @CB-4
  Scenario: two threads replay at once, each loop on its own thread
    Given a machine with an MI200 agent as well
    And the application has a buffer "y" of 64 elements filled with 0
    And the application has a buffer "z" of 64 elements filled with 0 on the MI200 agent
    And the tool asks for 3 passes
    When the application dispatches "increment" on "y" as "first"
    And meanwhile, thread 2 dispatches "increment" on "z" on the MI200 agent as "second" while "first" is in pass 1
    Then every replay callback, pass count and continue call runs on the thread that submitted the dispatch
    And exactly 3 passes run
    And "second" runs exactly 3 passes
    And the rule checks find nothing wrong

  @CB-3 @fault
  Scenario: an engine that asks for the pass count twice is caught
    Given the engine has the planted fault pass_count_called_twice
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of CB-3
