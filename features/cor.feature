@COR
Feature: Correlation ids across passes
  The internal and ancestor correlation ids are captured once, when the
  replay window opens, and are the same in CONFIG and in every pass. The
  external id is whatever the tool's own callback answers on each submit.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the tool traces kernel dispatches in a context "timing"
    And the application has a buffer "x" of 128 elements filled with 0
    And the tool asks for 3 passes

  @COR-1
  Scenario: CONFIG and every pass carry the ids captured when the window opened
    When the application dispatches "increment" on "x"
    Then every replay callback of the dispatch carries the same internal and ancestor correlation ids
    And the rule checks find nothing wrong

  @COR-2 @DID-4
  Scenario: each pass delivers its record with the same ids and its own timestamps
    When the application dispatches "increment" on "x"
    Then every pass delivers a kernel trace record with those correlation ids and its own timestamps
    And the rule checks find nothing wrong

  @COR-3 @DID-5
  Scenario: a tool that blindly increments its external id gets a different one on every pass
    Given the tool's external correlation callback blindly increments its id on every call
    When the application dispatches "increment" on "x"
    Then the kernel trace records of passes 0, 1 and 2 carry external ids 1, 2 and 3
    And the kernel trace records of "increment" name passes 0, 1 and 2
    And the rule checks find nothing wrong

  @COR-3
  Scenario: a tool that answers one external id gets it on every pass
    Given the tool's external correlation callback answers 7 every time
    When the application dispatches "increment" on "x"
    Then the kernel trace records of passes 0, 1 and 2 carry external ids 7, 7 and 7
    And the rule checks find nothing wrong

  @COR-1 @COR-2
  Scenario: two threads launch at once and each dispatch takes its own thread's API calls
    Given the application has a buffer "y" of 128 elements filled with 0
    When application thread 1 dispatches "increment" on "x" as "first"
    And application thread 2 dispatches "increment" on "y" as "second"
    Then thread 2's launch call opens inside thread 1's, before its submission
    And the replay callbacks and records of "first" carry the ids of the innermost API call open on its thread, and as ancestor the call around it
    And the replay callbacks and records of "second" carry the ids of the innermost API call open on its thread, and as ancestor the call around it
    And the rule checks find nothing wrong

  @COR-1 @COR-2 @fault
  Scenario: an engine that takes an API call's ancestor from a process-wide variable is caught
    Given the engine has the planted fault ancestor_process_wide
    And the application has a buffer "y" of 128 elements filled with 0
    When application thread 1 dispatches "increment" on "x" as "first"
    And application thread 2 dispatches "increment" on "y" as "second"
    Then the checks report a violation of COR-1
    And the checks report a violation of COR-2

  @COR-1 @fault
  Scenario: an engine that takes a new correlation id per pass is caught
    Given the engine has the planted fault correlation_per_pass
    When the application dispatches "increment" on "x"
    Then the checks report a violation of COR-1

  @COR-3 @fault
  Scenario: an engine that reuses the first pass's external id instead of asking the tool is caught
    Given the engine has the planted fault external_correlation_reused
    And the tool's external correlation callback blindly increments its id on every call
    When the application dispatches "increment" on "x"
    Then the checks report a violation of COR-3
