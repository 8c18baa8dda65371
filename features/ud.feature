@UD
Feature: One user-data value per replay sequence
  What the tool writes into the user data while a dispatch is configured is
  handed to the pass count, every pass and every continue call of that
  dispatch, and to no other dispatch. Every pass starts from it again.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the application has a buffer "x" of 64 elements filled with 0

  @UD-1
  Scenario: the value written at configuration reaches every callback of the sequence
    Given the tool asks for 4 passes and its continue always says go on
    And the tool writes 42 into the replay user data when "first" is configured
    When the application dispatches "increment" on "x" as "first"
    And the application dispatches "increment" on "x" as "second"
    Then the pass count, every pass and every continue call of the dispatch see user data 42
    And the replay callbacks of "second" never see user data 42
    And the rule checks find nothing wrong

  @UD-2
  Scenario: a write made during a pass is seen by that pass only
    Given the tool asks for 3 passes and its continue always says go on
    And the tool writes 42 into the replay user data when the dispatch is configured
    And the tool overwrites the user data as every pass begins
    When the application dispatches "increment" on "x"
    Then every pass begins with user data 42 again
    And each pass's EXIT and the continue after it see what that pass wrote
    And the rule checks find nothing wrong

  @UD-2 @fault
  Scenario: an engine that carries a pass's write into the next pass is caught
    Given the engine has the planted fault user_data_not_reseeded
    And the tool asks for 3 passes
    And the tool writes 42 into the replay user data when the dispatch is configured
    And the tool overwrites the user data as every pass begins
    When the application dispatches "increment" on "x"
    Then the checks report a violation of UD-2

  @UD-2 @fault
  Scenario: an engine that hides a pass's own write from its EXIT is caught by what the tool wrote
    Given the engine has the planted fault user_data_write_lost
    And the tool asks for 3 passes
    And the tool writes 42 into the replay user data when the dispatch is configured
    And the tool overwrites the user data as every pass begins
    When the application dispatches "increment" on "x"
    Then the checks report a violation of UD-2
