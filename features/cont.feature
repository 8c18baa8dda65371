@CONT
Feature: When the tool is asked whether to go on
  The continue callback is asked after a pass has finished, after that pass's
  EXIT, whether another pass follows. A fixed loop never asks after its last
  pass; an indefinite loop asks every time, the last time included.

  Background:
    Given a machine with an MI200 agent
    And a tool that subscribes to kernel replay
    And the application has a buffer "x" of 128 elements filled with 0

  @CONT-1 @CONT-4
  Scenario: continue is asked after each pass has closed
    Given the tool asks for 4 passes and stops after pass 2
    When the application dispatches "increment" on "x"
    Then passes 0, 1 and 2 run
    And each consultation of continue follows the PASS EXIT of the pass it judges
    And each pass opens with PASS ENTER and closes with PASS EXIT, in order
    And the rule checks find nothing wrong

  @CONT-2
  Scenario: a fixed loop never asks continue after its final pass
    Given the tool asks for 3 passes and its continue always says go on
    When the application dispatches "increment" on "x"
    Then passes 0, 1 and 2 run
    And continue is consulted after passes 0 and 1
    And the rule checks find nothing wrong

  @CONT-3 @PC-5
  Scenario: an indefinite loop ends on the pass its continue says stop, and was asked after that pass too
    Given the tool asks for an indefinite loop and stops after pass 2
    When the application dispatches "increment" on "x"
    Then passes 0, 1 and 2 run
    And continue is consulted after passes 0, 1 and 2
    And the application sees one completion, after the last pass
    And the buffer "x" holds 1 in every element
    And the rule checks find nothing wrong

  @CONT-4
  Scenario: every pass of an early-ended loop gets its EXIT, the last one too
    Given the tool asks for 6 passes and stops after pass 0
    When the application dispatches "increment" on "x"
    Then passes 0 run
    And each pass opens with PASS ENTER and closes with PASS EXIT, in order
    And the rule checks find nothing wrong

  @CONT-2 @fault
  Scenario: an engine that asks continue after the final pass of a fixed loop is caught
    Given the engine has the planted fault continue_after_last_pass
    And the tool asks for 3 passes and its continue always says go on
    When the application dispatches "increment" on "x"
    Then the checks report a violation of CONT-2

  @CONT-4 @fault
  Scenario: an engine that forgets the last pass's EXIT is caught
    Given the engine has the planted fault skip_last_pass_exit
    And the tool asks for 3 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of CONT-4
