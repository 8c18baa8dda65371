@DID
Feature: One dispatch id for every pass of a dispatch
  The SDK reserves one dispatch id for the logical dispatch before CONFIG, and
  every pass reuses it. Passes are told apart by their pass index, never by
  the dispatch id.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the tool traces kernel dispatches in a context "timing"
    And the application has a buffer "x" of 128 elements filled with 0

  @DID-1 @DID-2 @DID-3
  Scenario: every pass, callback and record carries the one reserved id
    Given the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    And the application then dispatches "increment" on "x"
    Then one dispatch id is reserved for every dispatch the application makes
    And everything the dispatch causes carries its one dispatch id
    And everything the dispatch causes carries its one dispatch id of "increment-2"
    And the rule checks find nothing wrong

  @DID-1
  Scenario: a declined dispatch runs once under the id reserved before CONFIG
    Given the tool leaves the pass count unset
    When the application dispatches "increment" on "x"
    Then one dispatch id is reserved for every dispatch the application makes
    And everything the dispatch causes carries its one dispatch id
    And the rule checks find nothing wrong

  @DID-4 @DID-5
  Scenario: passes share the id but have their own times and pass index
    Given the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then each pass has its own kernel start and end times
    And the kernel trace records of the passes share the dispatch id and differ in their pass index
    And the kernel trace records of "increment" name passes 0, 1 and 2
    And the rule checks find nothing wrong

  @DID-1 @DID-2 @DID-3 @fault
  Scenario: an engine that takes a new dispatch id per pass is caught
    Given the engine has the planted fault dispatch_id_per_pass
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of DID-3

  @DID-4 @fault
  Scenario: an engine that stamps every pass with the first pass's times is caught
    Given the engine has the planted fault reuse_first_pass_timestamps
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of DID-4

  @DID-1 @DID-3
  Scenario: each kernel packet of one write is its own dispatch, barriers between them or not
    Given the tool asks for 2 passes
    When the application submits 3 "increment" dispatches on "x" in one write, with a barrier between each two as "batch"
    And the application then dispatches "increment" on "x" as "after"
    Then one dispatch id is reserved for every dispatch the application makes
    And the kernel of "batch" runs 3 times on the GPU
    And the kernel of "after" runs twice on the GPU
    And the buffer "x" holds 4 in every element
    And the rule checks find nothing wrong

  @DID-1 @fault
  Scenario: an engine that stops reading a submission at its first barrier is caught
    Given the engine has the planted fault barrier_ends_submission
    And the tool asks for 2 passes
    When the application submits 3 "increment" dispatches on "x" in one write, with a barrier between each two as "batch"
    Then the checks report a violation of DID-1
