@ACT
Feature: Which dispatches become replay candidates
  A dispatch is a replay candidate only when a started context subscribes to
  kernel replay covering the CONFIG operation; only a submission of exactly
  one kernel dispatch packet is replayed.

  Background:
    Given a machine with an MI300 agent
    And the application has a buffer "x" of 64 elements filled with 0

  @ACT-1 @ACT-2
  Scenario: a started context subscribed to every operation makes a dispatch a candidate
    Given a tool that subscribes to kernel replay
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then CONFIG fires once, ENTER then EXIT, around every pass
    And exactly 2 passes run
    And the rule checks find nothing wrong

  @ACT-1
  Scenario: a subscription naming CONFIG and PASS works like one to all operations
    Given a tool that subscribes to kernel replay for the operations CONFIG and PASS
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then exactly 2 passes run
    And the rule checks find nothing wrong

  @ACT-3
  Scenario: a subscription to PASS alone activates nothing
    Given a tool that subscribes to kernel replay for the operation PASS only
    And the tool traces kernel dispatches in a context "timing"
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then the dispatch gets no replay callback and runs once
    And the rule checks find nothing wrong

  @ACT-3
  Scenario: a replay context that was configured but never started activates nothing
    Given a tool that subscribes to kernel replay but never starts that context
    And the tool traces kernel dispatches in a context "timing"
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then the dispatch gets no replay callback and runs once
    And the rule checks find nothing wrong

  @ACT-3
  Scenario: a replay context stopped globally activates nothing from then on
    Given a tool that subscribes to kernel replay
    And the tool traces kernel dispatches in a context "timing"
    And the tool asks for 2 passes
    And the tool stops its replay context once "before" has completed
    When the application dispatches "increment" on "x" as "before"
    And the application dispatches "increment" on "x" as "after"
    Then "before" runs exactly 2 passes
    And "after" gets no replay callback and runs once
    And the buffer "x" holds 2 in every element
    And the rule checks find nothing wrong

  @ACT-4
  Scenario: a tool that never configures replay pays for no tracking: nothing is saved
    Given the tool traces kernel dispatches in a context "timing"
    When the application dispatches "increment" on "x"
    Then the dispatch gets no replay callback and runs once
    And no memory is saved or restored
    And the rule checks find nothing wrong

  @ACT-4 @MEM-4
  Scenario: configuring replay switches the tracker on for the application's allocations
    Given a tool that subscribes to kernel replay
    And the application has a buffer "y" of 64 elements filled with 0
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then the snapshot saves 2 regions of device memory

  @ACT-5
  Scenario: only one context may configure kernel replay
    Given a tool that subscribes to kernel replay
    And the tool configures kernel replay on a second context as well
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then the second configuration of kernel replay is refused with ERROR_SERVICE_ALREADY_CONFIGURED
    And exactly 2 passes run
    And the rule checks find nothing wrong

  @ACT-6
  Scenario: multi-packet submissions and graph launches run once, with one warning each for the process
    Given a tool that subscribes to kernel replay
    And the tool asks for 3 passes
    When the application submits "increment" on "x" together with a barrier packet in one write as "packets"
    And the application submits "increment" on "x" together with a barrier packet in one write as "packets-again"
    And the application launches "increment" on "x" as part of a graph as "graph"
    Then "packets" gets no replay callback and runs once
    And "packets-again" gets no replay callback and runs once
    And "graph" gets no replay callback and runs once
    And the SDK warns "multi_packet_submission" once
    And the SDK warns "graph_launch" once
    And the buffer "x" holds 3 in every element
    And the rule checks find nothing wrong

  @ACT-3 @fault
  Scenario: an engine that activates replay without a CONFIG subscription is caught
    Given the engine has the planted fault activate_without_config
    And a tool that subscribes to kernel replay for the operation PASS only
    And the tool asks for 2 passes
    When the application submits "increment" on "x" together with a barrier packet in one write
    Then the checks report a violation of ACT-3

  @ACT-6 @fault
  Scenario: an engine that warns about every multi-packet submission is caught
    Given the engine has the planted fault warn_every_time
    And a tool that subscribes to kernel replay
    And the tool asks for 3 passes
    When the application submits "increment" on "x" together with a barrier packet in one write as "packets"
    And the application submits "increment" on "x" together with a barrier packet in one write as "packets-again"
    Then the checks report a violation of ACT-6

  @ACT-3 @ACT-6
  Scenario: with only a PASS subscription, a multi-packet submission is not even a candidate
    Given a tool that subscribes to kernel replay for the operation PASS only
    And the tool asks for 2 passes
    When the application submits "increment" on "x" together with a barrier packet in one write
    Then the dispatch gets no replay callback and runs once
    And the SDK prints no warning

  @ACT-6 @fault
  Scenario: an engine that replays the kernel of a multi-packet submission is caught by the packets the application wrote
    Given the engine has the planted fault replay_multi_packet
    And a tool that subscribes to kernel replay
    And the tool asks for 3 passes
    When the application submits "increment" on "x" together with a barrier packet in one write
    Then the checks report a violation of ACT-6

  # Another context is started on purpose: with nothing started at all, the
  # SDK's "nothing to do" path would hide the fault.
  @ACT-3 @fault
  Scenario: an engine that lets a never-started replay context activate replay is caught
    Given the engine has the planted fault activate_unstarted
    And a tool that subscribes to kernel replay but never starts that context
    And the tool traces kernel dispatches in a context "timing"
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then the checks report a violation of ACT-3

  @ACT-6
  Scenario: the multi-packet and graph warnings are printed once for the process, whichever thread writes them
    Given a tool that subscribes to kernel replay
    And a machine with an MI200 agent as well
    And the application has a buffer "y" of 64 elements filled with 0 on the MI200 agent
    And the tool asks for 2 passes
    When the application submits "increment" on "x" together with a barrier packet in one write as "packets"
    And the application launches "increment" on "x" as part of a graph as "graph"
    And thread 2 submits "increment" on "y" together with a barrier packet in one write on the MI200 agent as "packets-2"
    And thread 2 launches "increment" on "y" as part of a graph on the MI200 agent as "graph-2"
    Then "packets-2" gets no replay callback and runs once
    And "graph-2" gets no replay callback and runs once
    And the SDK warns "multi_packet_submission" once
    And the SDK warns "graph_launch" once
    And the rule checks find nothing wrong

  @ACT-6 @fault
  Scenario: an engine that warns once per thread is caught
    Given the engine has the planted fault warn_once_per_thread
    And a tool that subscribes to kernel replay
    And a machine with an MI200 agent as well
    And the application has a buffer "y" of 64 elements filled with 0 on the MI200 agent
    And the tool asks for 2 passes
    When the application submits "increment" on "x" together with a barrier packet in one write as "packets"
    And thread 2 submits "increment" on "y" together with a barrier packet in one write on the MI200 agent as "packets-2"
    Then the checks report a violation of ACT-6
