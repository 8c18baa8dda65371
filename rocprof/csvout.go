package rocprof

import (
	"bytes"
	"math"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
)

// The CSV files, column for column as source/lib/output/generateCSV.cpp
// writes them.

// CounterCSVColumns are counter_collection.csv's columns; there is no
// Replay_Pass column, under replay or not (RPV-6).
var CounterCSVColumns = []string{"Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id",
	"Thread_Id", "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size", "Scratch_Size",
	"VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name", "Counter_Value", "Start_Timestamp",
	"End_Timestamp"}

// KernelTraceCSVColumns are kernel_trace.csv's columns.
var KernelTraceCSVColumns = []string{"Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
	"Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size",
	"Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y",
	"Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"}

// StatsCSVColumns are the columns of kernel_stats.csv and domain_stats.csv.
var StatsCSVColumns = []string{"Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs",
	"MaxNs", "StdDev"}

// AgentInfoCSVColumns are agent_info.csv's columns.
var AgentInfoCSVColumns = []string{"Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count", "Simd_Count",
	"Cpu_Core_Id_Base", "Simd_Id_Base", "Max_Waves_Per_Simd", "Lds_Size_In_Kb", "Gds_Size_In_Kb", "Num_Gws",
	"Wave_Front_Size", "Num_Xcc", "Cu_Count", "Array_Count", "Num_Shader_Banks", "Simd_Arrays_Per_Engine",
	"Cu_Per_Simd_Array", "Simd_Per_Cu", "Max_Slots_Scratch_Cu", "Gfx_Target_Version", "Vendor_Id", "Device_Id",
	"Location_Id", "Domain", "Drm_Render_Minor", "Num_Sdma_Engines", "Num_Sdma_Xgmi_Engines",
	"Num_Sdma_Queues_Per_Engine", "Num_Cp_Queues", "Max_Engine_Clk_Ccompute", "Max_Engine_Clk_Fcompute",
	"Sdma_Fw_Version", "Fw_Version", "Capability", "Cu_Per_Engine", "Max_Waves_Per_Cu", "Family_Id",
	"Workgroup_Max_Size", "Grid_Max_Size", "Local_Mem_Size", "Hive_Id", "Gpu_Id", "Workgroup_Max_Dim_X",
	"Workgroup_Max_Dim_Y", "Workgroup_Max_Dim_Z", "Grid_Max_Dim_X", "Grid_Max_Dim_Y", "Grid_Max_Dim_Z", "Name",
	"Vendor_Name", "Product_Name", "Model_Name"}

// The kernel symbols of the simulated kernels (the simulator has no ISA;
// fixed values keep the output stable).
const (
	vgprCount      = 8
	accumVGPRCount = 0
	sgprCount      = 16
	ldsBlockSize   = 128 * 4 // counter_info.hpp: LDS is reported in blocks of 512 bytes
)

// ldsBlocks rounds a group segment size up to whole LDS blocks, as both
// counter_collection.csv and kernel_trace.csv report LDS_Block_Size.
func ldsBlocks(groupSegment uint32) uint64 {
	return (uint64(groupSegment) + ldsBlockSize - 1) &^ (ldsBlockSize - 1)
}

// magnitude is x*y*z of a grid or workgroup (generateCSV.cpp).
func magnitude(d hsa.Dim3) uint64 { return uint64(d.X) * uint64(d.Y) * uint64(d.Z) }

// threadID is the OS thread id of an application thread: the main thread
// (spec thread 1) has the process id, as on Linux.
func threadID(th hsa.ThreadID) uint64 { return PID + uint64(th) - 1 }

// counterTotals adds a record's values per counter and orders them by
// counter id (generateCSV.cpp accumulates into a std::map keyed by the
// counter id), so a counter listed twice is one row.
func (r *AppRun) counterTotals(rec CounterRecord) []counterTotal {
	a := r.agent(rec.Dispatch.AgentID)
	sum := map[uint64]*counterTotal{}
	for _, c := range rec.Counters {
		h, _ := counterHandle(a, c.Name)
		if t := sum[h]; t != nil {
			t.value += c.Value
		} else {
			sum[h] = &counterTotal{handle: h, name: c.Name, value: c.Value}
		}
	}
	out := make([]counterTotal, 0, len(sum))
	for _, t := range sum {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].handle < out[j].handle })
	return out
}

type counterTotal struct {
	handle uint64
	name   string
	value  uint64
}

func (r *AppRun) agent(id hsa.AgentID) hsa.Agent {
	for _, a := range r.Agents {
		if a.ID == id {
			return a
		}
	}
	return hsa.Agent{ID: id}
}

// CounterCSV renders counter_collection.csv: one row per counter of every
// record, no Replay_Pass column (RPV-6).
func (r *AppRun) CounterCSV() []byte {
	var b bytes.Buffer
	csvRow(&b, header(CounterCSVColumns)...)
	mode := r.Config.AgentIndex()
	for _, rec := range r.Counters {
		d := rec.Dispatch
		for _, c := range r.counterTotals(rec) {
			csvRow(&b, num(rec.Correlation.Internal), num(d.DispatchID), text(agentIndex(mode, d.AgentID)),
				num(uint64(d.QueueID)), num(PID), num(threadID(rec.Thread)), num(magnitude(d.GridSize)),
				num(d.KernelID), text(r.kernelName(d)), num(magnitude(d.WorkgroupSize)), num(ldsBlocks(d.GroupSegmentSize)),
				num(uint64(d.PrivateSegmentSize)), num(vgprCount), num(accumVGPRCount), num(sgprCount),
				text(c.name), dbl(float64(c.value)), num(rec.Start), num(rec.End))
		}
	}
	return b.Bytes()
}

// kernelName is the formatted kernel name (demangled, truncated with -T).
// The simulated kernels have plain names, so both leave them as they are.
func (r *AppRun) kernelName(d replay.DispatchInfo) string { return d.KernelName }

// KernelTraceCSV renders kernel_trace.csv: under kernel replay one row per
// pass, all with the dispatch's id.
func (r *AppRun) KernelTraceCSV() []byte {
	var b bytes.Buffer
	csvRow(&b, header(KernelTraceCSVColumns)...)
	mode := r.Config.AgentIndex()
	for _, k := range r.Kernels {
		d := k.Dispatch
		csvRow(&b, text(BufferKindNames[bufferKindDispatch]), text(agentIndex(mode, d.AgentID)), num(uint64(d.QueueID)), num(0),
			num(threadID(k.Thread)), num(d.DispatchID), num(d.KernelID), text(r.kernelName(d)), num(k.Correlation.Internal),
			num(k.Start), num(k.End), num(ldsBlocks(d.GroupSegmentSize)), num(uint64(d.PrivateSegmentSize)),
			num(vgprCount), num(accumVGPRCount), num(sgprCount),
			num(uint64(d.WorkgroupSize.X)), num(uint64(d.WorkgroupSize.Y)), num(uint64(d.WorkgroupSize.Z)),
			num(uint64(d.GridSize.X)), num(uint64(d.GridSize.Y)), num(uint64(d.GridSize.Z)))
	}
	return b.Bytes()
}

// stats accumulates durations as statistics.hpp does: count, sum, sum of
// squares, min and max of integer nanoseconds.
type stats struct {
	name               string
	count              int64
	sum, sqr, min, max uint64
}

func (s *stats) add(v uint64) {
	if s.count == 0 {
		s.min, s.max = v, v
	}
	s.count++
	s.sum += v
	s.sqr += v * v
	s.min = min(s.min, v)
	s.max = max(s.max, v)
}

func (s *stats) merge(o stats) {
	if s.count == 0 {
		s.min, s.max = o.min, o.max
	}
	s.count += o.count
	s.sum += o.sum
	s.sqr += o.sqr
	s.min = min(s.min, o.min)
	s.max = max(s.max, o.max)
}

func (s stats) mean() float64 { return float64(s.sum) / float64(s.count) }

// variance is the sample variance (n-1), 0 below two samples.
func (s stats) variance() float64 {
	if s.count < 2 {
		return 0
	}
	return (float64(s.sqr) - float64(s.sum)*float64(s.sum)/float64(s.count)) / float64(s.count-1)
}

func (s stats) stddev() float64 { return math.Sqrt(math.Abs(s.variance())) }

// kernelStats is generate_stats for kernel dispatch records (one entry per
// kernel name, every record a call) sorted by total duration, largest
// first (ties by name, where the reference's sort leaves them unordered),
// and their total.
func (r *AppRun) kernelStats() ([]stats, stats) {
	by := map[string]*stats{}
	for _, k := range r.Kernels {
		name := r.kernelName(k.Dispatch)
		if by[name] == nil {
			by[name] = &stats{name: name}
		}
		by[name].add(k.End - k.Start)
	}
	var list []stats
	var total stats
	for _, s := range by {
		list = append(list, *s)
		total.merge(*s)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].sum != list[j].sum {
			return list[i].sum > list[j].sum
		}
		return list[i].name < list[j].name
	})
	return list, total
}

func statsRow(b *bytes.Buffer, s stats, total float64) {
	csvRow(b, text(s.name), inum(s.count), num(s.sum), raw(statsDouble(s.mean())),
		raw(statsPercent(float64(s.sum)/total*100)), num(s.min), num(s.max), raw(statsDouble(s.stddev())))
}

// KernelStatsCSV renders kernel_stats.csv: every kernel dispatch record is
// a call, so under kernel replay each pass counts.
func (r *AppRun) KernelStatsCSV() []byte {
	list, total := r.kernelStats()
	var b bytes.Buffer
	csvRow(&b, header(StatsCSVColumns)...)
	for _, s := range list {
		statsRow(&b, s, float64(total.sum))
	}
	return b.Bytes()
}

// DomainStatsCSV renders domain_stats.csv: one row per traced domain (here
// KERNEL_DISPATCH only, counter collection contributes no statistics), the
// percentage of the time of all domains.
func (r *AppRun) DomainStatsCSV() []byte {
	_, total := r.kernelStats()
	total.name = "KERNEL_DISPATCH"
	var b bytes.Buffer
	csvRow(&b, header(StatsCSVColumns)...)
	statsRow(&b, total, float64(total.sum))
	return b.Bytes()
}

// agentRow is one agent of the machine as agent_info.csv and the JSON's
// agents list describe it.
type agentRow struct {
	cpu                   bool
	handle                uint64
	node, logical, typeID uint64
	gpuIndex              int64
	hsa                   hsa.Agent
}

// machine lists the CPU agent and the GPUs, sorted by node id.
func (r *AppRun) machine() []agentRow {
	rows := []agentRow{{cpu: true, handle: cpuHandle, gpuIndex: -1}}
	gpus := slices.Clone(r.Agents)
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].ID < gpus[j].ID })
	for i, a := range gpus {
		rows = append(rows, agentRow{handle: agentHandle(a.ID), node: uint64(a.ID), logical: uint64(a.ID),
			typeID: uint64(i), gpuIndex: int64(i), hsa: a})
	}
	return rows
}

// The fields of an agent this model knows; the rest are 0 or empty.
func (a agentRow) typeName() string {
	if a.cpu {
		return "CPU"
	}
	return "GPU"
}

func (a agentRow) names() (name, vendor, product, model string) {
	if a.cpu {
		return "replayspec-sim CPU", "CPU", "replayspec-sim CPU", ""
	}
	return a.hsa.Arch, "AMD", a.hsa.Name, ""
}

func (a agentRow) numbers() (waveFront, xcc, gfx, vendorID, wgMax int) {
	if a.cpu {
		return 0, 0, 0, 0, 0
	}
	return waveFrontSize(a.hsa), xccCount(a.hsa), gfxTargetVersion(a.hsa.Arch), 0x1002, 1024
}

// AgentInfoCSV renders agent_info.csv, written whenever CSV output is on
// and the run produced records (tool.cpp), agents sorted by node id.
func (r *AppRun) AgentInfoCSV() []byte {
	var b bytes.Buffer
	csvRow(&b, header(AgentInfoCSVColumns)...)
	for _, a := range r.machine() {
		wave, xcc, gfx, vendorID, wgMax := a.numbers()
		name, vendor, product, model := a.names()
		wgDim := wgMax // the largest workgroup in each dimension
		f := []csvField{num(a.node), num(a.logical), text(a.typeName())}
		for _, n := range []int{0, 0, 0, 0, 0, 0, 0, 0, wave, xcc, 0, 0, 0, 0, 0, 0, 0, gfx, vendorID, 0, 0, 0,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, wgMax, 0, 0, 0, 0, wgDim, wgDim, wgDim, 0, 0, 0} {
			f = append(f, inum(int64(n)))
		}
		f = append(f, text(name), text(vendor), text(product), text(model))
		csvRow(&b, f...)
	}
	return b.Bytes()
}
