@CMP
Feature: The application sees one completion per dispatch
  However many passes a loop runs, the application's completion signal is
  held back on every pass and fired once, after the loop has ended.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay

  @CMP-1 @CMP-2
  Scenario: one completion, after the last pass
    Given the application has a buffer "x" of 64 elements filled with 5
    And the tool asks for 4 passes
    When the application dispatches "increment" on "x"
    Then exactly 4 passes run
    And the application sees one completion, after the last pass
    And the buffer "x" holds 6 in every element
    And the rule checks find nothing wrong

  @CMP-3 @PC-3 @PC-4 @PC-5
  Scenario: a fixed loop, an early exit and an ended indefinite loop look the same to the application
    Given the application has a buffer "a" of 64 elements filled with 5
    And the application has a buffer "b" of 64 elements filled with 5
    And the application has a buffer "c" of 64 elements filled with 5
    When the application dispatches "increment" on "a" as "fixed"
    And the application dispatches "increment" on "b" as "early"
    And the application dispatches "increment" on "c" as "indefinite"
    And the tool asks for 3 passes for "fixed"
    And the tool asks for 6 passes for "early"
    And for "early" the tool's continue stops after pass 1
    And the tool asks for 0 passes for "indefinite"
    And for "indefinite" the tool's continue stops after pass 4
    Then "fixed" runs exactly 3 passes
    And passes 0 and 1 run of "early"
    And passes 0, 1, 2, 3 and 4 run of "indefinite"
    And the application cannot tell "fixed" from "early"
    And the application cannot tell "fixed" from "indefinite"
    And the rule checks find nothing wrong

  @CMP-4
  Scenario: an indefinite loop whose continue never says stop never completes
    Given the application has a buffer "x" of 64 elements filled with 5
    And the tool asks for an indefinite loop whose continue never says stop
    And the run gives up on a loop after 40 passes
    When the application dispatches "increment" on "x"
    Then the loop is reported as never ending after 40 passes
    And the application never sees the dispatch complete
    And the rule checks find nothing wrong

  @CMP-1 @CMP-2 @fault
  Scenario: an engine that fires the completion on every pass is caught
    Given the engine has the planted fault completion_every_pass
    And the application has a buffer "x" of 64 elements filled with 5
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report violations of CMP-1 and CMP-2

  @CMP-2 @fault
  Scenario: an engine that fires the completion before CONFIG EXIT is caught
    Given the engine has the planted fault completion_before_config_exit
    And the application has a buffer "x" of 64 elements filled with 5
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of CMP-2

  @CMP-1 @CMP-3
  Scenario: an indefinite loop that ends after its first pass still completes once
    Given the application has a buffer "x" of 64 elements filled with 5
    And the tool asks for an indefinite loop and stops after pass 0
    When the application dispatches "increment" on "x"
    Then exactly 1 passes run
    And the application sees one completion, after the last pass
    And the buffer "x" holds 6 in every element
    And the rule checks find nothing wrong

  @CMP-1 @fault
  Scenario: an engine that never completes an indefinite loop of one pass is caught
    Given the engine has the planted fault indefinite_one_pass_no_completion
    And the application has a buffer "x" of 64 elements filled with 5
    And the tool asks for an indefinite loop and stops after pass 0
    When the application dispatches "increment" on "x"
    Then the checks report a violation of CMP-1
