@SVC
Feature: Services under replay
  Dispatch counters, SPM, kernel dispatch tracing and thread trace consult the
  per-pass choice of the tool; PC sampling and device-wide counting are
  agent-wide and collect on every pass whatever the tool chose. Some
  services cannot share a pass.

  Background:
    Given a machine with an MI300 agent
    And a tool that subscribes to kernel replay
    And the application has a buffer "x" of 64 elements filled with 0

  @SVC-1
  Scenario: SPM honours a local stop and a later local start
    Given the tool records SPM in a context "spm"
    And the tool asks for 3 passes
    And in pass 0 the tool stops "spm" locally
    And in pass 2 the tool starts "spm" locally
    When the application dispatches "increment" on "x"
    Then "spm" delivers SPM records for passes 2 only
    And the rule checks find nothing wrong

  @SVC-1 @LCX-3
  Scenario: kernel dispatch tracing skips the passes it is stopped in and comes back when started again
    Given the tool traces kernel dispatches in a context "timing"
    And the tool asks for 3 passes
    And in pass 0 the tool stops "timing" locally
    And in pass 2 the tool starts "timing" locally
    When the application dispatches "increment" on "x"
    Then "timing" delivers kernel trace records for passes 2 only
    And the rule checks find nothing wrong

  @SVC-1 @LCX-3
  Scenario: thread trace stopped in one pass and started in a later one collects again
    Given the tool records a thread trace in a context "att"
    And the tool asks for 4 passes
    And in pass 1 the tool stops "att" locally
    And in pass 3 the tool starts "att" locally
    When the application dispatches "increment" on "x"
    Then "att" delivers thread trace records for passes 0 and 3
    And the rule checks find nothing wrong

  @SVC-1 @LCX-7
  Scenario: a local start cannot make kernel tracing collect where it would not without an override
    Given the tool traces kernel dispatches in a context "later"
    And the tool configures "later" but never starts it
    And the tool asks for 2 passes
    And in pass 0 the tool starts "later" locally
    When the application dispatches "increment" on "x"
    Then the local start of "later" in PASS ENTER of pass 0 returns ERROR_CONTEXT_NOT_STARTED
    And "later" delivers no kernel trace records in any pass
    And the rule checks find nothing wrong

  @SVC-2
  Scenario: PC sampling and device counting keep collecting on every pass after a local stop
    Given the tool samples PCs in a context "pcs"
    And the tool counts device-wide GRBM_COUNT in a context "device"
    And the tool asks for 3 passes
    And in pass 0 the tool stops "pcs" and "device" locally
    When the application dispatches "increment" on "x"
    Then the local stop of "pcs" in PASS ENTER of pass 0 returns SUCCESS
    And "pcs" delivers PC sample records for passes 0, 1 and 2
    And "device" delivers device count records for passes 0, 1 and 2
    And the rule checks find nothing wrong

  @SVC-3
  Scenario: thread trace and SPM never share a pass
    Given the tool records a thread trace in a context "att"
    And the tool records SPM in a context "spm"
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then no pass delivers both thread trace and SPM records
    And the SDK warns "service_conflict" once
    And the rule checks find nothing wrong

  @SVC-3 @SVC-1
  Scenario: in separate passes, thread trace and SPM both collect without conflict
    Given the tool records a thread trace in a context "att"
    And the tool records SPM in a context "spm"
    And the tool asks for 2 passes
    And in pass 0 the tool stops "spm" locally
    And in pass 1 the tool starts "spm" locally
    And in pass 1 the tool stops "att" locally
    When the application dispatches "increment" on "x"
    Then "att" delivers thread trace records for passes 0 only
    And "spm" delivers SPM records for passes 1 only
    And the SDK prints no warning
    And the rule checks find nothing wrong

  @SVC-3
  Scenario: on an MI300, dispatch counters and PC sampling never share a pass
    Given the tool collects the counters SQ_WAVES in a context "counters"
    And the tool samples PCs in a context "pcs"
    And the tool asks for 2 passes
    When the application dispatches "increment" on "x"
    Then no pass delivers both counter and PC sample records
    And the SDK warns "service_conflict" once

  @SVC-2 @fault
  Scenario: an engine whose PC sampling obeys a local stop is caught
    Given the engine has the planted fault pc_sampling_honours_stop
    And the tool samples PCs in a context "pcs"
    And the tool asks for 3 passes
    And in pass 1 the tool stops "pcs" locally
    When the application dispatches "increment" on "x"
    Then the checks report a violation of SVC-2

  @SVC-2
  Scenario Outline: on every kind of agent, PC sampling and device counting ignore a local stop
    Given a machine with <agent> agent as well
    And the application has a buffer "y" of 64 elements filled with 0 on the <kind> agent
    And the tool samples PCs in a context "pcs"
    And the tool counts device-wide GRBM_COUNT in a context "device"
    And the tool asks for 3 passes
    And in pass 1 the tool stops "pcs" and "device" locally
    When the application dispatches "increment" on "y" on the <kind> agent
    Then "pcs" delivers PC sample records for passes 0, 1 and 2
    And "device" delivers device count records for passes 0, 1 and 2
    And the rule checks find nothing wrong

    Examples:
      | agent       | kind     |
      | an MI200    | MI200    |
      | a consumer  | consumer |

  @SVC-2 @fault
  Scenario: an engine whose PC sampling obeys a local stop on MI200 and MI300 parts only is caught there
    Given the engine has the planted fault pc_sampling_honours_stop_on_mi
    And the tool samples PCs in a context "pcs"
    And the tool asks for 3 passes
    And in pass 1 the tool stops "pcs" locally
    When the application dispatches "increment" on "x"
    Then the checks report a violation of SVC-2
