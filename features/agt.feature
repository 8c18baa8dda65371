@AGT
Feature: Pass counts derived per agent
  A tool that asks for one pass per counter group of the dispatch's own agent
  gets as many passes as that agent needs, and pass i collects group i of
  that agent, with no wrap and no skip, even when the agents of one machine
  split the same counters differently.

  @AGT-1 @PC-3
  Scenario: one machine, two agent kinds, the same counters: each dispatch gets its own agent's groups
    Given a machine with an MI300 agent and an MI200 agent
    And a tool that subscribes to kernel replay
    And the tool collects the counters SQ_WAVES, SQ_INSTS_VALU, SQ_INSTS_SALU, TCC_HIT, TCC_MISS, TCC_EA_RDREQ and GRBM_COUNT in a context "counters"
    And the tool asks for one pass per counter group of the dispatch's agent
    And the application has a buffer "a" of 64 elements filled with 0 on the MI300 agent
    And the application has a buffer "b" of 64 elements filled with 0 on the MI200 agent
    When the application dispatches "increment" on "a" on the MI300 agent as "on-mi300"
    And the application dispatches "increment" on "b" on the MI200 agent as "on-mi200"
    Then "on-mi300" runs 3 passes, each collecting counters no other pass collects
    And "on-mi200" runs 2 passes, each collecting counters no other pass collects
    And together the passes of "on-mi300" collect SQ_WAVES, SQ_INSTS_VALU, SQ_INSTS_SALU, TCC_HIT, TCC_MISS, TCC_EA_RDREQ and GRBM_COUNT
    And together the passes of "on-mi200" collect SQ_WAVES, SQ_INSTS_VALU, SQ_INSTS_SALU, TCC_HIT, TCC_MISS, TCC_EA_RDREQ and GRBM_COUNT
    And the buffer "a" holds 1 in every element
    And the buffer "b" holds 1 in every element
    And the rule checks find nothing wrong

  @AGT-1 @PC-2
  Scenario: a consumer agent lacking a counter needs one group, so its dispatch is not replayed
    Given a machine with a consumer agent
    And a tool that subscribes to kernel replay
    And the tool collects the counters SQ_WAVES, TCC_HIT, TCC_MISS and TCC_EA_RDREQ in a context "counters"
    And the tool asks for one pass per counter group of the dispatch's agent
    When the application dispatches "increment" on "x"
    Then the dispatch is not replayed: it runs once, and no memory is saved
    And together the passes of "increment" collect SQ_WAVES, TCC_HIT and TCC_MISS
    And the rule checks find nothing wrong

  @AGT-1 @fault
  Scenario: a trace in which the last pass collects the first pass's group again is caught
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the tool collects the counters SQ_WAVES, SQ_INSTS_VALU, SQ_INSTS_SALU, TCC_HIT, TCC_MISS, TCC_EA_RDREQ and GRBM_COUNT in a context "counters"
    And the tool asks for one pass per counter group of the dispatch's agent
    When the application dispatches "increment" on "x"
    And the trace is altered so that the last pass repeats the first pass's counter group
    Then the checks report a violation of AGT-1
