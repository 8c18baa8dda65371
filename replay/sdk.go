// Package replay is the reference SDK side of kernel replay: contexts and
// services, the KERNEL_REPLAY callback domain, the queue write interceptor
// and the replay loop. It speaks to the GPU only through hsa/ and reports
// what it does to a trace.Recorder; it never imports a runtime.
//
// It is public because it is the executable reading of the rules: a port
// author reads it beside docs/rules.md, runs it on their own hsa.Runtime,
// or diffs their port's traces against it (replayspec diff).
//
// The planted faults (faults.go) are kept out of the rule code: a fault
// that is a collaborator misbehaving (the runtime, the agent locks, the
// queue writes, the tool's callbacks and the functions it sets) is a
// wrapper installed around that collaborator only when it is planted
// (faulty.go, faulty_tool.go), and a fault that is the SDK deciding
// otherwise is one field of policy (faulty_policy.go). That way the replay
// loop reads as the rules, and an SDK with no fault planted runs no fault
// code at all.
package replay

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// Options configure an SDK instance.
type Options struct {
	// Recorder receives the SDK's own events (dispatch ids, snapshot,
	// restore, warnings). Nil records nothing.
	Recorder *trace.Recorder
	// MaxPasses bounds every replay loop. The SDK itself has no bound
	// (CMP-4); a caller that must not hang sets one, and a loop that
	// reaches it is reported as never-ended. 0 means unbounded.
	MaxPasses uint64
	// Context, when cancelled, ends a running loop the same way.
	Context context.Context
	// Faults plants known bugs, for proving that the oracles catch them.
	Faults Faults
}

// SDK is one process's profiler state.
type SDK struct {
	rt     hsa.Runtime
	agents map[hsa.AgentID]hsa.Agent
	opts   Options
	pol    policy // the loop's decisions a planted fault changes (faulty_policy.go)
	rec    *trace.Recorder
	// intercept is onWrite, wrapped when a fault of the queue writes is
	// planted (faulty.go).
	intercept hsa.WriteInterceptor

	mu       sync.Mutex // guards contexts and configuration; never held across a call out
	contexts map[ContextID]*toolContext
	nextCtx  ContextID
	active   atomic.Pointer[activeSet] // copy-on-write view read by the interceptor
	// idle: nothing started and replay not configured, so a write needs
	// nothing of the SDK and queues may skip the interceptor
	// (hsa.IdleBypass); idleMu orders its updates (see updateIdle).
	idle   atomic.Bool
	idleMu sync.Mutex

	dispatchIDs    atomic.Uint64
	correlationIDs atomic.Uint64
	apiTracing     atomic.Pointer[APITracingFunc] // the tool's API tracing, nil none
	// lastAPI is the process-wide "current call" of the planted fault
	// ancestor_process_wide (policy.ancestorProcessWide); unused otherwise.
	lastAPI    atomic.Uint64
	kernels    kernelTable
	tracker    tracker
	warnings   onceWarnings
	agentLocks agentLocks
	// replayConfigured is set once KERNEL_REPLAY is configured: from then
	// on a loop may hold an agent, and even a write made with nothing
	// started takes its agent's lock (MEM-6, decision 18.2).
	replayConfigured atomic.Bool
	threads          sync.Map // hsa.ThreadID -> *threadState
	// shared is the process-wide override of local_override_per_process
	// (faulty_policy.go); nil, and never read, with no fault planted.
	shared *sharedOverride
}

// toolContext is one context and the services configured on it.
type toolContext struct {
	id      ContextID
	started bool

	replay         *replaySubscription
	counters       *counterService
	kernelTrace    RecordFunc
	deviceCounting *deviceService
	pcSampling     *deviceService
	spm            RecordFunc
	threadTrace    RecordFunc
	externalCorr   ExternalCorrelationFunc
}

type replaySubscription struct {
	config, pass bool // operations covered (ACT-1, ACT-2)
	callback     TracingCallback
}

type counterService struct {
	selectCounters CounterSelectFunc
	record         RecordFunc
}

type deviceService struct {
	agent    hsa.AgentID // 0: every agent
	counters []string
	record   RecordFunc
}

// New returns an SDK over rt.
func New(rt hsa.Runtime, opts Options) *SDK {
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	s := &SDK{rt: withFaults(rt, opts.Faults), opts: opts, pol: policyOf(opts.Faults), rec: opts.Recorder, contexts: map[ContextID]*toolContext{}}
	s.intercept = faultyWrites(s.onWrite, opts.Faults)
	if s.pol.localOverridePerProcess {
		s.shared = &sharedOverride{enabled: map[ContextID]bool{}}
	}
	s.agents = map[hsa.AgentID]hsa.Agent{}
	for _, a := range rt.Agents() {
		s.agents[a.ID] = a
	}
	s.publish(&activeSet{})
	s.agentLocks.init(faultyLocks(lockMaker(rt), opts.Faults)) // the runtime's own locks, whatever wraps it
	s.warnings.init(s.pol.warnEveryTime)
	return s
}

// CreateContext is rocprofiler_create_context.
func (s *SDK) CreateContext() (ContextID, Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextCtx++
	id := s.nextCtx
	s.contexts[id] = &toolContext{id: id}
	return id, StatusSuccess
}

// ConfigureCallbackTracing is rocprofiler_configure_callback_tracing_service
// for the KERNEL_REPLAY domain (API-1). A nil or empty operation list covers
// every operation (ACT-2).
func (s *SDK) ConfigureCallbackTracing(ctx ContextID, kind TracingKind, ops []Operation, cb TracingCallback) Status {
	if kind != KindKernelReplay {
		return StatusErrorKindNotFound
	}
	if cb == nil {
		return StatusErrorInvalidArgument
	}
	sub := &replaySubscription{callback: faultyTool(cb, s.opts.Faults), config: len(ops) == 0, pass: len(ops) == 0}
	for _, op := range ops {
		switch op {
		case OpConfig:
			sub.config = true
		case OpPass:
			sub.pass = true
		default:
			return StatusErrorOperationNotFound
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.contexts[ctx]
	if !ok {
		return StatusErrorContextNotFound
	}
	for _, other := range s.contexts {
		if other.replay != nil {
			return StatusErrorServiceAlreadyConfigured // ACT-5: one context per process
		}
	}
	if c.started {
		return StatusErrorConfigurationLocked
	}
	c.replay = sub
	s.tracker.enable(s.rt) // ACT-4: configuring the service switches the tracker on
	s.replayConfigured.Store(true)
	s.refreshActive()
	return StatusSuccess
}

// ConfigureCounterCollection configures dispatch counter collection (API-7:
// it can live beside kernel replay).
func (s *SDK) ConfigureCounterCollection(ctx ContextID, selectCounters CounterSelectFunc, record RecordFunc) Status {
	if selectCounters == nil || record == nil {
		return StatusErrorInvalidArgument
	}
	return s.configure(ctx, func(c *toolContext) bool {
		if c.counters != nil {
			return false
		}
		c.counters = &counterService{selectCounters, record}
		return true
	})
}

// ConfigureKernelTrace configures kernel dispatch tracing.
func (s *SDK) ConfigureKernelTrace(ctx ContextID, record RecordFunc) Status {
	return s.configureRecordService(ctx, record, func(c *toolContext) *RecordFunc { return &c.kernelTrace })
}

// ConfigureSPM configures streaming performance monitoring.
func (s *SDK) ConfigureSPM(ctx ContextID, record RecordFunc) Status {
	return s.configureRecordService(ctx, record, func(c *toolContext) *RecordFunc { return &c.spm })
}

// ConfigureThreadTrace configures dispatch thread trace (ATT).
func (s *SDK) ConfigureThreadTrace(ctx ContextID, record RecordFunc) Status {
	return s.configureRecordService(ctx, record, func(c *toolContext) *RecordFunc { return &c.threadTrace })
}

// ConfigureDeviceCounting configures agent-wide counting on agent (0: all).
func (s *SDK) ConfigureDeviceCounting(ctx ContextID, agent hsa.AgentID, counters []string, record RecordFunc) Status {
	return s.configureDeviceService(ctx, agent, counters, record, func(c *toolContext) **deviceService { return &c.deviceCounting })
}

// ConfigurePCSampling configures agent-wide PC sampling on agent (0: all).
func (s *SDK) ConfigurePCSampling(ctx ContextID, agent hsa.AgentID, record RecordFunc) Status {
	return s.configureDeviceService(ctx, agent, nil, record, func(c *toolContext) **deviceService { return &c.pcSampling })
}

// ConfigureExternalCorrelation installs the external correlation callback.
func (s *SDK) ConfigureExternalCorrelation(ctx ContextID, fn ExternalCorrelationFunc) Status {
	if fn == nil {
		return StatusErrorInvalidArgument
	}
	return s.configure(ctx, func(c *toolContext) bool {
		if c.externalCorr != nil {
			return false
		}
		c.externalCorr = faultyExternalCorrelation(fn, s.opts.Faults)
		return true
	})
}

func (s *SDK) configureRecordService(ctx ContextID, record RecordFunc, slot func(*toolContext) *RecordFunc) Status {
	if record == nil {
		return StatusErrorInvalidArgument
	}
	return s.configure(ctx, func(c *toolContext) bool {
		p := slot(c)
		if *p != nil {
			return false
		}
		*p = record
		return true
	})
}

func (s *SDK) configureDeviceService(ctx ContextID, agent hsa.AgentID, counters []string, record RecordFunc, slot func(*toolContext) **deviceService) Status {
	if record == nil {
		return StatusErrorInvalidArgument
	}
	if agent != 0 {
		if _, ok := hsa.FindAgent(s.rt, agent); !ok {
			return StatusErrorAgentNotFound
		}
	}
	return s.configure(ctx, func(c *toolContext) bool {
		p := slot(c)
		if *p != nil {
			return false
		}
		*p = &deviceService{agent: agent, counters: append([]string(nil), counters...), record: record}
		return true
	})
}

// configure applies set to a context that exists and is not started; set
// reports false when the service was already configured there.
func (s *SDK) configure(ctx ContextID, set func(*toolContext) bool) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.contexts[ctx]
	if !ok {
		return StatusErrorContextNotFound
	}
	if c.started {
		return StatusErrorConfigurationLocked
	}
	if !set(c) {
		return StatusErrorServiceAlreadyConfigured
	}
	s.refreshActive()
	return StatusSuccess
}

// StartContext is rocprofiler_start_context.
func (s *SDK) StartContext(ctx ContextID) Status { return s.setStarted(ctx, true) }

// StopContext is rocprofiler_stop_context.
func (s *SDK) StopContext(ctx ContextID) Status { return s.setStarted(ctx, false) }

func (s *SDK) setStarted(ctx ContextID, on bool) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.contexts[ctx]
	if !ok {
		return StatusErrorContextNotFound
	}
	c.started = on
	s.refreshActive()
	return StatusSuccess
}

// IsActive reports whether a context is globally started.
func (s *SDK) IsActive(ctx ContextID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.contexts[ctx]
	return ok && c.started
}

// OperationName is the domain's name-by-id query (API-4). Ids from LAST
// up are not operations (API-3).
func (s *SDK) OperationName(kind TracingKind, op Operation) (string, Status) {
	if kind != KindKernelReplay {
		return "", StatusErrorKindNotFound
	}
	if op == OpNone || op >= OpLast {
		return "", StatusErrorOperationNotFound
	}
	return "ROCPROFILER_KERNEL_REPLAY_" + op.String(), StatusSuccess
}

// OperationID is the domain's id-by-name query (API-4). It accepts the
// full enumerator name or the short one.
func (s *SDK) OperationID(kind TracingKind, name string) (Operation, Status) {
	if kind != KindKernelReplay {
		return OpNone, StatusErrorKindNotFound
	}
	for op := OpConfig; op < OpLast; op++ {
		if name == op.String() || name == "ROCPROFILER_KERNEL_REPLAY_"+op.String() {
			return op, StatusSuccess
		}
	}
	return OpNone, StatusErrorOperationNotFound
}
