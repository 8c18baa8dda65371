package rocprof

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/internal/hsa"
	"github.com/replayspec/replayspec/internal/replay"
)

// CounterCSVColumns are counter_collection.csv's columns, the reference's
// exactly; there is no Replay_Pass column, under replay or not (RPV-6).
var CounterCSVColumns = []string{"Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id",
	"Thread_Id", "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size", "Scratch_Size",
	"VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name", "Counter_Value", "Start_Timestamp",
	"End_Timestamp"}

// KernelTraceCSVColumns are kernel_trace.csv's columns.
var KernelTraceCSVColumns = []string{"Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
	"Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size",
	"Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y",
	"Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"}

// KernelStatsCSVColumns are kernel_stats.csv's columns.
var KernelStatsCSVColumns = []string{"Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs",
	"MaxNs", "StdDev"}

// Register counts of the simulated kernels' code objects (the simulator
// has no ISA; fixed values keep the output stable).
const (
	vgprCount      = 8
	accumVGPRCount = 0
	sgprCount      = 16
	dispatchSize   = 112 // sizeof the dispatch counting record in this model
	agentSize      = 64
)

// threadID is the OS thread id of an application thread: the main thread
// (spec thread 1) has the process id, as on Linux.
func threadID(th hsa.ThreadID) uint64 { return PID + uint64(th) - 1 }

// JSON document, rocprofv3's layout (the fields this tool fills).
type (
	jsonHandle struct {
		Handle uint64 `json:"handle"`
	}
	jsonDim3 struct {
		X uint32 `json:"x"`
		Y uint32 `json:"y"`
		Z uint32 `json:"z"`
	}
	jsonDoc struct {
		Tool []jsonTool `json:"rocprofiler-sdk-tool"`
	}
	jsonTool struct {
		Metadata        jsonMetadata        `json:"metadata"`
		Agents          []jsonAgent         `json:"agents"`
		Counters        []jsonCounter       `json:"counters"`
		KernelSymbols   []jsonKernelSymbol  `json:"kernel_symbols"`
		CallbackRecords jsonCallbackRecords `json:"callback_records"`
		BufferRecords   jsonBufferRecords   `json:"buffer_records"`
	}
	jsonMetadata struct {
		PID      uint64     `json:"pid"`
		InitTime uint64     `json:"init_time"`
		FiniTime uint64     `json:"fini_time"`
		Config   jsonConfig `json:"config"`
		Command  []string   `json:"command"`
	}
	jsonConfig struct {
		KernelReplay bool       `json:"kernel_replay"`
		ReplayMode   string     `json:"replay_mode"`
		ReplayPass   int        `json:"application_replay_pass,omitempty"`
		PMC          [][]string `json:"pmc"`
		KernelTrace  bool       `json:"kernel_trace"`
		Stats        bool       `json:"stats"`
	}
	jsonAgent struct {
		Size          uint64     `json:"size"`
		ID            jsonHandle `json:"id"`
		Type          int        `json:"type"`
		NodeID        uint64     `json:"node_id"`
		LogicalNodeID uint64     `json:"logical_node_id"`
		Name          string     `json:"name"`
		ProductName   string     `json:"product_name"`
		VendorName    string     `json:"vendor_name"`
		// CounterGroups is this tool's: the groups collected per pass on
		// this agent.
		CounterGroups [][]string `json:"counter_groups"`
	}
	jsonCounter struct {
		ID          jsonHandle `json:"id"`
		AgentID     jsonHandle `json:"agent_id"`
		Name        string     `json:"name"`
		Description string     `json:"description"`
		Block       string     `json:"block"`
		IsConstant  int        `json:"is_constant"`
		IsDerived   int        `json:"is_derived"`
	}
	jsonKernelSymbol struct {
		Size                uint64 `json:"size"`
		KernelID            uint64 `json:"kernel_id"`
		CodeObjectID        uint64 `json:"code_object_id"`
		KernelName          string `json:"kernel_name"`
		FormattedKernelName string `json:"formatted_kernel_name"`
		GroupSegmentSize    uint32 `json:"group_segment_size"`
		PrivateSegmentSize  uint32 `json:"private_segment_size"`
		SGPRCount           int    `json:"sgpr_count"`
		ArchVGPRCount       int    `json:"arch_vgpr_count"`
		AccumVGPRCount      int    `json:"accum_vgpr_count"`
	}
	jsonCallbackRecords struct {
		CounterCollection []jsonCounterRecord `json:"counter_collection"`
	}
	jsonBufferRecords struct {
		KernelDispatch []jsonKernelDispatch `json:"kernel_dispatch"`
	}
	jsonCorrelation struct {
		Internal uint64 `json:"internal"`
		External uint64 `json:"external"`
	}
	jsonDispatchInfo struct {
		Size               uint64     `json:"size"`
		AgentID            jsonHandle `json:"agent_id"`
		QueueID            jsonHandle `json:"queue_id"`
		KernelID           uint64     `json:"kernel_id"`
		DispatchID         uint64     `json:"dispatch_id"`
		PrivateSegmentSize uint32     `json:"private_segment_size"`
		GroupSegmentSize   uint32     `json:"group_segment_size"`
		WorkgroupSize      jsonDim3   `json:"workgroup_size"`
		GridSize           jsonDim3   `json:"grid_size"`
	}
	jsonDispatchData struct {
		Size           uint64           `json:"size"`
		CorrelationID  jsonCorrelation  `json:"correlation_id"`
		StartTimestamp uint64           `json:"start_timestamp"`
		EndTimestamp   uint64           `json:"end_timestamp"`
		DispatchInfo   jsonDispatchInfo `json:"dispatch_info"`
	}
	jsonCounterValue struct {
		CounterID jsonHandle `json:"counter_id"`
		Value     float64    `json:"value"`
	}
	jsonCounterRecord struct {
		ThreadID     uint64             `json:"thread_id"`
		DispatchData jsonDispatchData   `json:"dispatch_data"`
		Records      []jsonCounterValue `json:"records"`
		StreamID     jsonHandle         `json:"stream_id"`
		ReplayPass   *uint64            `json:"replay_pass,omitempty"`
	}
	jsonKernelDispatch struct {
		Size           uint64           `json:"size"`
		Kind           int              `json:"kind"`
		Operation      int              `json:"operation"`
		ThreadID       uint64           `json:"thread_id"`
		CorrelationID  jsonCorrelation  `json:"correlation_id"`
		StartTimestamp uint64           `json:"start_timestamp"`
		EndTimestamp   uint64           `json:"end_timestamp"`
		DispatchInfo   jsonDispatchInfo `json:"dispatch_info"`
	}
)

// counterHandle numbers an agent's counters: agent id times 1000 plus the
// counter's 1-based position in the agent's blocks.
func counterHandle(a hsa.Agent, name string) (uint64, bool) {
	i := 0
	for _, b := range a.CounterBlocks {
		for _, c := range b.Counters {
			i++
			if c == name {
				return uint64(a.ID)*1000 + uint64(i), true
			}
		}
	}
	return 0, false
}

func dispatchInfoJSON(d replay.DispatchInfo) jsonDispatchInfo {
	return jsonDispatchInfo{Size: d.Size, AgentID: jsonHandle{uint64(d.AgentID)}, QueueID: jsonHandle{uint64(d.QueueID)},
		KernelID: d.KernelID, DispatchID: d.DispatchID, PrivateSegmentSize: d.PrivateSegmentSize,
		GroupSegmentSize: d.GroupSegmentSize,
		WorkgroupSize:    jsonDim3{d.WorkgroupSize.X, d.WorkgroupSize.Y, d.WorkgroupSize.Z},
		GridSize:         jsonDim3{d.GridSize.X, d.GridSize.Y, d.GridSize.Z}}
}

// JSON renders the pass as rocprofv3's results.json.
func (p *Pass) JSON(o Options, specName string) ([]byte, error) {
	mode := "application"
	if p.KernelReplay {
		mode = "kernel"
	}
	t := jsonTool{
		Metadata: jsonMetadata{PID: PID, InitTime: p.InitTime, FiniTime: p.FiniTime,
			Config: jsonConfig{KernelReplay: p.KernelReplay, ReplayMode: mode, ReplayPass: p.Number,
				PMC: nonNil(p.PMC), KernelTrace: o.KernelTrace, Stats: o.Stats},
			Command: []string{"replayspec-app", specName}},
		Agents:          []jsonAgent{},
		Counters:        []jsonCounter{},
		KernelSymbols:   []jsonKernelSymbol{},
		CallbackRecords: jsonCallbackRecords{CounterCollection: []jsonCounterRecord{}},
		BufferRecords:   jsonBufferRecords{KernelDispatch: []jsonKernelDispatch{}},
	}
	agents := map[hsa.AgentID]hsa.Agent{}
	for _, a := range p.Agents {
		agents[a.ID] = a
		t.Agents = append(t.Agents, jsonAgent{Size: agentSize, ID: jsonHandle{uint64(a.ID)}, Type: 2,
			NodeID: uint64(a.ID), LogicalNodeID: uint64(a.ID), Name: a.Arch, ProductName: a.Name,
			VendorName: "AMD", CounterGroups: nonNil(p.AgentGroups[a.ID])})
		for _, b := range a.CounterBlocks {
			for _, c := range b.Counters {
				h, _ := counterHandle(a, c)
				t.Counters = append(t.Counters, jsonCounter{ID: jsonHandle{h}, AgentID: jsonHandle{uint64(a.ID)},
					Name: c, Description: b.Name + " counter " + c, Block: b.Name})
			}
		}
	}
	for _, k := range p.kernelSymbols() {
		t.KernelSymbols = append(t.KernelSymbols, jsonKernelSymbol{Size: 80, KernelID: k.KernelID, CodeObjectID: 1,
			KernelName: k.KernelName, FormattedKernelName: k.KernelName, GroupSegmentSize: k.GroupSegmentSize,
			PrivateSegmentSize: k.PrivateSegmentSize, SGPRCount: sgprCount, ArchVGPRCount: vgprCount,
			AccumVGPRCount: accumVGPRCount})
	}
	for _, r := range p.Counters {
		jr := jsonCounterRecord{ThreadID: threadID(r.Thread),
			DispatchData: jsonDispatchData{Size: dispatchSize,
				CorrelationID:  jsonCorrelation{Internal: r.Correlation.Internal, External: r.Correlation.External.Value},
				StartTimestamp: r.Start, EndTimestamp: r.End, DispatchInfo: dispatchInfoJSON(r.Dispatch)},
			Records: []jsonCounterValue{}, ReplayPass: r.Pass}
		for _, c := range r.Counters {
			h, _ := counterHandle(agents[r.Dispatch.AgentID], c.Name)
			jr.Records = append(jr.Records, jsonCounterValue{CounterID: jsonHandle{h}, Value: float64(c.Value)})
		}
		t.CallbackRecords.CounterCollection = append(t.CallbackRecords.CounterCollection, jr)
	}
	for _, k := range p.Kernels {
		t.BufferRecords.KernelDispatch = append(t.BufferRecords.KernelDispatch, jsonKernelDispatch{Size: dispatchSize,
			Kind: 12, Operation: 1, ThreadID: threadID(k.Thread),
			CorrelationID:  jsonCorrelation{Internal: k.Correlation.Internal, External: k.Correlation.External.Value},
			StartTimestamp: k.Start, EndTimestamp: k.End, DispatchInfo: dispatchInfoJSON(k.Dispatch)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(jsonDoc{Tool: []jsonTool{t}}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func nonNil(g [][]string) [][]string {
	if g == nil {
		return [][]string{}
	}
	return g
}

func (p *Pass) kernelSymbols() []replay.DispatchInfo {
	seen := map[uint64]replay.DispatchInfo{}
	for _, r := range p.Counters {
		seen[r.Dispatch.KernelID] = r.Dispatch
	}
	for _, k := range p.Kernels {
		seen[k.Dispatch.KernelID] = k.Dispatch
	}
	out := make([]replay.DispatchInfo, 0, len(seen))
	for _, d := range seen {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KernelID < out[j].KernelID })
	return out
}

// csvLine writes one line with every field quoted, as rocprofv3 does.
func csvLine(b *bytes.Buffer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(f, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteByte('\n')
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// CounterCSV renders counter_collection.csv: one row per counter of every
// record, no Replay_Pass column (RPV-6).
func (p *Pass) CounterCSV() []byte {
	var b bytes.Buffer
	csvLine(&b, CounterCSVColumns)
	for _, r := range p.Counters {
		d := r.Dispatch
		for _, c := range r.Counters {
			csvLine(&b, []string{u(r.Correlation.Internal), u(d.DispatchID), u(uint64(d.AgentID)), u(uint64(d.QueueID)),
				u(PID), u(threadID(r.Thread)), u(d.GridSize.Size()), u(d.KernelID), d.KernelName,
				u(d.WorkgroupSize.Size()), u(uint64(d.GroupSegmentSize)), u(uint64(d.PrivateSegmentSize)),
				strconv.Itoa(vgprCount), strconv.Itoa(accumVGPRCount), strconv.Itoa(sgprCount),
				c.Name, strconv.FormatFloat(float64(c.Value), 'f', -1, 64), u(r.Start), u(r.End)})
		}
	}
	return b.Bytes()
}

// KernelTraceCSV renders kernel_trace.csv: under kernel replay one row per
// pass, all with the dispatch's id.
func (p *Pass) KernelTraceCSV() []byte {
	var b bytes.Buffer
	csvLine(&b, KernelTraceCSVColumns)
	for _, k := range p.Kernels {
		d := k.Dispatch
		csvLine(&b, []string{"KERNEL_DISPATCH", u(uint64(d.AgentID)), u(uint64(d.QueueID)), "0",
			u(threadID(k.Thread)), u(d.DispatchID), u(d.KernelID), d.KernelName, u(k.Correlation.Internal),
			u(k.Start), u(k.End), u(uint64(d.GroupSegmentSize)), u(uint64(d.PrivateSegmentSize)),
			strconv.Itoa(vgprCount), strconv.Itoa(accumVGPRCount), strconv.Itoa(sgprCount),
			u(uint64(d.WorkgroupSize.X)), u(uint64(d.WorkgroupSize.Y)), u(uint64(d.WorkgroupSize.Z)),
			u(uint64(d.GridSize.X)), u(uint64(d.GridSize.Y)), u(uint64(d.GridSize.Z))})
	}
	return b.Bytes()
}

// KernelStatsCSV renders kernel_stats.csv: every kernel dispatch record
// is a call, so under kernel replay each pass counts.
func (p *Pass) KernelStatsCSV() []byte {
	type stat struct {
		name              string
		calls             uint64
		total, min, max   uint64
		sum2              float64
		firstSeenPosition int
	}
	stats := map[string]*stat{}
	var grand uint64
	for i, k := range p.Kernels {
		d := k.End - k.Start
		s := stats[k.Dispatch.KernelName]
		if s == nil {
			s = &stat{name: k.Dispatch.KernelName, min: math.MaxUint64, firstSeenPosition: i}
			stats[s.name] = s
		}
		s.calls++
		s.total += d
		s.min = min(s.min, d)
		s.max = max(s.max, d)
		s.sum2 += float64(d) * float64(d)
		grand += d
	}
	list := make([]*stat, 0, len(stats))
	for _, s := range stats {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].total != list[j].total {
			return list[i].total > list[j].total
		}
		return list[i].name < list[j].name
	})
	var b bytes.Buffer
	csvLine(&b, KernelStatsCSVColumns)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	for _, s := range list {
		avg := float64(s.total) / float64(s.calls)
		sd := math.Sqrt(math.Max(s.sum2/float64(s.calls)-avg*avg, 0))
		pct := 0.0
		if grand > 0 {
			pct = 100 * float64(s.total) / float64(grand)
		}
		csvLine(&b, []string{s.name, u(s.calls), u(s.total), f(avg), f(pct), u(s.min), u(s.max), f(sd)})
	}
	return b.Bytes()
}

// expandKeys replaces rocprofv3's %pid% and %hostname% keys (and %p).
func expandKeys(s string) string {
	return strings.NewReplacer("%pid%", u(PID), "%hostname%", Hostname, "%p", u(PID)).Replace(s)
}

// Formats returns the output formats with their default (csv).
func (o Options) formats() []string {
	if len(o.Formats) == 0 {
		return []string{"csv"}
	}
	return o.Formats
}

// OutputDir is the directory the session writes to.
func (o Options) OutputDir() string {
	d := o.OutputDirectory
	if d == "" {
		d = DefaultOutputDir
	}
	return expandKeys(d)
}

// FilePrefix is what every file name starts with (-o, default the pid).
func (o Options) FilePrefix() string {
	f := o.OutputFile
	if f == "" {
		f = DefaultOutputFile
	}
	return expandKeys(f)
}

// Files renders every output file of the session, by path relative to the
// output directory: application replay passes in pass_1, pass_2, ...
// (RPV-5); a single run at the top.
func (r *Result) Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	prefix := r.Options.FilePrefix()
	for _, p := range r.Passes {
		dir := ""
		if p.Number > 0 {
			dir = fmt.Sprintf("pass_%d", p.Number)
		}
		name := func(suffix string) string { return filepath.Join(dir, prefix+"_"+suffix) }
		for _, f := range r.Options.formats() {
			switch f {
			case "json":
				data, err := p.JSON(r.Options, r.Spec.Name)
				if err != nil {
					return nil, err
				}
				out[name("results.json")] = data
			case "csv":
				if len(r.Options.PMC) > 0 {
					out[name("counter_collection.csv")] = p.CounterCSV()
				}
				if r.Options.KernelTrace {
					out[name("kernel_trace.csv")] = p.KernelTraceCSV()
				}
				if r.Options.Stats {
					out[name("kernel_stats.csv")] = p.KernelStatsCSV()
				}
			}
		}
	}
	return out, nil
}

// Write writes Files under the output directory and returns the paths
// written, sorted.
func (r *Result) Write() ([]string, error) {
	files, err := r.Files()
	if err != nil {
		return nil, err
	}
	base := r.Options.OutputDir()
	var paths []string
	for rel, data := range files {
		path := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths, nil
}
