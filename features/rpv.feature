@RPV
Feature: Kernel replay through rocprofv3
  rocprofv3 offers a narrow slice of kernel replay: one flag, dispatch
  counters only, one pass per counter group of the dispatch's agent, and the
  pass index in its JSON output.

  Background:
    Given a machine with an MI300 agent
    And the application has a buffer "x" of 256 elements filled with 0
    And the application dispatches "increment" on "x"

  @RPV-1
  Scenario Outline: kernel replay needs counters and the beta flag
    When the user runs rocprofv3 with "<command line>"
    Then rocprofv3 refuses with a diagnostic for RPV-1 mentioning "<mentioning>"

    Examples:
      | command line                                                          | mentioning                   |
      | --replay-mode kernel --kernel-replay-beta-enabled                     | --pmc                        |
      | --pmc SQ_WAVES --replay-mode kernel                                   | --kernel-replay-beta-enabled |
      | --pmc SQ_WAVES --replay-mode kernel --kernel-replay-beta-enabled=false | --kernel-replay-beta-enabled |
      | --pmc SQ_WAVES --replay-mode kernel --kernel-replay-beta-enabled no    | --kernel-replay-beta-enabled |

  @RPV-2 @RPV-3 @RPV-4
  Scenario: with the flag, one pass per counter group, and no continue or local toggles
    When the user runs rocprofv3 with "--pmc SQ_WAVES TCC_HIT TCC_MISS --replay-mode kernel --kernel-replay-beta-enabled"
    Then rocprofv3 creates the kernel replay context
    And the dispatch on the MI300 agent runs 2 passes, one per counter group of that agent
    And rocprofv3 installs neither continue nor the local context functions

  @RPV-3 @AGT-1
  Scenario: the same counters give each agent kind its own pass count
    Given a machine with an MI200 agent as well
    And the application has a buffer "y" of 256 elements filled with 0 on the MI200 agent
    And the application dispatches "increment" on "y" on the MI200 agent
    When the user runs rocprofv3 with "--pmc SQ_WAVES SQ_INSTS_VALU SQ_INSTS_SALU TCC_HIT TCC_MISS TCC_EA_RDREQ GRBM_COUNT --replay-mode kernel --kernel-replay-beta-enabled"
    Then the dispatch on the MI300 agent runs 3 passes, one per counter group of that agent
    And the dispatch on the MI200 agent runs 2 passes, one per counter group of that agent

  @RPV-2 @RPV-5
  Scenario: without the flag, several counter groups replay the whole application
    When the user runs rocprofv3 with "--pmc SQ_WAVES --pmc TCC_HIT --pmc GRBM_COUNT"
    Then rocprofv3 does not create the kernel replay context
    And the application runs 3 times, once per counter group

  @RPV-6 @RPV-8
  Scenario: the JSON output names the pass; the CSV output does not
    When the user runs rocprofv3 with "--pmc SQ_WAVES TCC_HIT TCC_MISS --replay-mode kernel --kernel-replay-beta-enabled"
    Then the JSON counter records carry replay_pass and the CSV has no Replay_Pass column
    And the output passes the rocprofv3 output checks

  @RPV-8 @ACT-6
  Scenario: a graph launch is not replayed, and its single record passes the output checks
    Given the application launches "increment" on "x" as part of a graph as "graphed"
    When the user runs rocprofv3 with "--pmc SQ_WAVES --pmc TCC_HIT --replay-mode kernel --kernel-replay-beta-enabled --kernel-trace"
    Then the output passes the rocprofv3 output checks

  @RPV-7
  Scenario Outline: kernel replay refuses services that would run on every pass
    When the user runs rocprofv3 with "--pmc SQ_WAVES --replay-mode kernel --kernel-replay-beta-enabled <service>"
    Then rocprofv3 refuses with a diagnostic for RPV-7 mentioning "<names>"

    Examples:
      | service                     | names        |
      | --att                       | thread trace |
      | --att-no-intercept          | thread trace |
      | --pc-sampling-beta-enabled  | PC sampling  |
      | --spm SQ_WAVES              | SPM          |
      | --spm-sample-interval 10    | SPM          |

  @RPV-7
  Scenario: kernel tracing under kernel replay is allowed, with a warning
    When the user runs rocprofv3 with "--pmc SQ_WAVES --replay-mode kernel --kernel-replay-beta-enabled --kernel-trace"
    Then rocprofv3 accepts the command line
    And rocprofv3 warns that "one record per pass"

  @RPV-8 @fault
  Scenario: output in which a later pass claims to be pass 0 is caught
    When the user runs rocprofv3 with "--pmc SQ_WAVES TCC_HIT TCC_MISS --replay-mode kernel --kernel-replay-beta-enabled"
    And the output is altered so that a later pass claims to be pass 0
    Then the rocprofv3 output checks report RPV-8

  @RPV-9
  Scenario: every output file is laid out as the reference writer lays it out
    When the user runs rocprofv3 with "--pmc SQ_WAVES TCC_HIT TCC_MISS --replay-mode kernel --kernel-replay-beta-enabled --kernel-trace --stats"
    Then every output file is laid out as rocprofv3's writer lays it out

  @RPV-9 @fault
  Scenario Outline: output whose quoting or numbers differ from the writer's is caught
    When the user runs rocprofv3 with "--pmc SQ_WAVES TCC_HIT TCC_MISS --replay-mode kernel --kernel-replay-beta-enabled --kernel-trace --stats"
    And the output is altered so that <alteration>
    Then the rocprofv3 output checks report RPV-9 about "<about>" mentioning "<mentioning>"

    Examples:
      | alteration                                        | about              | mentioning                                       |
      | the CSV's counter values are written as integers  | Counter_Value      | is not written as the writer writes this value   |
      | the kernel trace's kernel names are not quoted    | Kernel_Name        | is not in double quotes                          |
      | the JSON's counter values are written as integers | counter_collection | the writer writes a counter value as a double    |
      | the statistics' averages have two decimals        | AverageNs          | is not written as the writer writes this value   |
