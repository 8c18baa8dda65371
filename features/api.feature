@API
Feature: The kernel replay API surface
  Replay is an ordinary callback tracing domain with two operations, CONFIG
  and PASS, each delivered as an ENTER and an EXIT, and one flat payload.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the application has a buffer "x" of 64 elements filled with 0
    And the tool asks for 2 passes

  @API-1 @PC-8
  Scenario: replay is switched on by an ordinary callback tracing configuration
    When the application dispatches "increment" on "x"
    Then the tool switched replay on with the ordinary callback tracing configuration, which succeeded
    And exactly 2 passes run
    And the rule checks find nothing wrong

  @API-2 @API-4
  Scenario: the domain has CONFIG=1 and PASS=2, each an ENTER and an EXIT, and answers name and id queries
    When the application dispatches "increment" on "x"
    Then asking by id and by name gives CONFIG=1 and PASS=2
    And CONFIG and PASS each deliver an ENTER and an EXIT
    And the rule checks find nothing wrong

  @API-3
  Scenario: snapshot and restore are not operations of the domain
    When the application dispatches "increment" on "x"
    Then asking for the operations SNAPSHOT and RESTORE by name finds nothing
    And asking for operation ids 3 and above finds nothing

  @API-5 @API-6
  Scenario: one flat payload, with only the fields of the current operation set
    When the application dispatches "increment" on "x"
    Then every replay callback's payload has its size and the dispatch's info filled in
    And no CONFIG payload carries a pass field
    And no PASS payload carries the tool's pass count or continue callbacks
    And the rule checks find nothing wrong

  @API-7
  Scenario: replay and ordinary dispatch counter collection are configured in one run
    Given the tool collects the counters TCC_HIT and TCC_MISS in a context "counters"
    When the application dispatches "increment" on "x"
    Then the tool switched replay on with the ordinary callback tracing configuration, which succeeded
    And the counter collection configuration succeeded too
    And the counter records of "increment" name passes 0 and 1
    And the rule checks find nothing wrong

  @API-6 @fault
  Scenario: an engine that fills the pass fields during CONFIG is caught
    Given the engine has the planted fault pass_fields_in_config
    When the application dispatches "increment" on "x"
    Then the checks report a violation of API-6

  @API-5 @fault
  Scenario: an engine whose payload size stops short of its last members is caught
    Given the engine has the planted fault payload_size_short
    When the application dispatches "increment" on "x"
    Then the checks report a violation of API-5

  @API-5 @fault
  Scenario: an engine that hands the tool another grid than the application launched is caught
    Given the engine has the planted fault dispatch_info_grid
    When the application dispatches "increment" on "x"
    Then the checks report a violation of API-5
