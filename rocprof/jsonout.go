package rocprof

import (
	"path/filepath"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
)

// results.json, key for key as source/lib/output/generateJSON.cpp and the
// serializers it calls (source/include/rocprofiler-sdk/cxx/serialization/
// save.hpp, lib/output/counter_info.hpp, agent_info.hpp, node_info.hpp,
// kernel_symbol_info.hpp, output_config.hpp) write it. Fields this model
// cannot know are written with their zero values, so a reader that indexes
// them still finds them.

// Sizes the SDK reports in size fields: sizeof the structure (fwd.h,
// dispatch_counting_service.h, buffer_tracing.h on a 64-bit build).
const (
	dispatchDataSize   = 168 // rocprofiler_dispatch_counting_service_data_t
	kernelRecordSize   = 192 // rocprofiler_buffer_tracing_kernel_dispatch_record_t
	kernelSymbolSize   = 88  // the kernel symbol register data in this model
	agentStructSize    = 1096
	codeObjectSize     = 72
	bufferKindDispatch = 11 // ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH
	opDispatchComplete = 2  // ROCPROFILER_KERNEL_DISPATCH_COMPLETE
	agentTypeCPU       = 1
	agentTypeGPU       = 2
)

// JSON renders the run as rocprofv3's results.json (newline-separated, no
// indentation, as the writer is opened).
func (r *AppRun) JSON(specName, outputDir string) []byte {
	return marshalJSON(jobj{{"rocprofiler-sdk-tool", jarr{r.jsonTool(specName, outputDir)}}}, 0)
}

func (r *AppRun) jsonTool(specName, outputDir string) jobj {
	return jobj{
		{"metadata", jobj{
			{"node", nodeInfo()},
			{"pid", uint64(PID)},
			{"init_time", r.InitTime},
			{"fini_time", r.FiniTime},
			{"command", jarr{"replayspec-app", specName}},
			{"config", r.outputConfig(outputDir)},
		}},
		{"agents", r.jsonAgents()},
		{"counters", r.jsonCounters()},
		{"strings", r.jsonStrings()},
		{"code_objects", r.jsonCodeObjects()},
		{"kernel_symbols", r.jsonKernelSymbols()},
		{"host_functions", jarr{hostFunction()}},
		{"summary", r.jsonSummary()},
		{"callback_records", jobj{
			{"counter_collection", r.jsonCounterRecords()},
			{"spm_counter_collection", jarr{}},
		}},
		{"buffer_records", r.jsonBufferRecords()},
	}
}

func nodeInfo() jobj {
	return jobj{{"id", uint64(0)}, {"hash", uint64(0)}, {"machine_id", Hostname}, {"system_name", "Linux"},
		{"hostname", Hostname}, {"release", ""}, {"version", ""}, {"hardware_name", "x86_64"}, {"domain_name", ""}}
}

// outputConfig is metadata.config: the output configuration's keys
// (output_config.hpp save); the tool's other settings, counters and
// kernel_replay among them, are in config.json (--output-config).
func (r *AppRun) outputConfig(outputDir string) jobj {
	cfg := r.Config
	rawDir := cfg.Values.str("output_directory")
	if rawDir == "" {
		rawDir = DefaultOutputDir
	}
	rawFile := cfg.Values.str("output_file")
	if rawFile == "" {
		rawFile = DefaultOutputFile
	}
	dir := outputDir
	if cfg.Dir != "" {
		dir = filepath.Join(outputDir, cfg.Dir)
		rawDir = filepath.Join(rawDir, cfg.Dir)
	}
	return jobj{
		{"output_path", dir}, {"output_file", expandKeys(rawFile)}, {"tmp_directory", dir},
		{"raw_output_path", rawDir}, {"raw_output_file", rawFile}, {"raw_tmp_directory", rawDir},
		{"perfetto_shmem_size_hint", uint64(64)}, {"perfetto_buffer_size", uint64(1 << 20)},
		{"perfetto_buffer_fill_policy", "discard"}, {"perfetto_backend", "inprocess"},
		{"summary", false}, {"summary_per_domain", false}, {"summary_groups", jarr{}},
		{"summary_unit", "nsec"}, {"summary_file", "stderr"},
		{"csv_output", cfg.Format("csv")}, {"json_output", cfg.Format("json")}, {"pftrace_output", false},
		{"otf2_output", false}, {"summary_output", false}, {"rocpd_output", false}, {"parquet_output", false},
		{"kernel_rename", false}, {"group_by_queue", false}, {"annotate_args", false}, {"annotate_kfd", false},
		{"annotate_pmc", false},
	}
}

func (r *AppRun) jsonAgents() jarr {
	var out jarr
	for _, a := range r.machine() {
		wave, xcc, gfx, vendorID, wgMax := a.numbers()
		name, vendor, product, model := a.names()
		typ := agentTypeGPU
		if a.cpu {
			typ = agentTypeCPU
		}
		z := uint64(0)
		visible := jobj{{"hsa", uint64(1)}, {"hip", uint64(1)}, {"rccl", uint64(1)}, {"rocdecode", uint64(1)}}
		if a.cpu {
			visible = jobj{{"hsa", uint64(1)}, {"hip", z}, {"rccl", z}, {"rocdecode", z}}
		}
		uuid := make(jarr, 16)
		for i := range uuid {
			uuid[i] = z
		}
		out = append(out, jobj{
			{"size", uint64(agentStructSize)}, {"id", handle(a.handle)}, {"type", typ},
			{"cpu_cores_count", z}, {"simd_count", z}, {"mem_banks_count", z}, {"caches_count", z},
			{"io_links_count", z}, {"cpu_core_id_base", z}, {"simd_id_base", z}, {"max_waves_per_simd", z},
			{"lds_size_in_kb", z}, {"gds_size_in_kb", z}, {"num_gws", z}, {"wave_front_size", wave},
			{"num_xcc", xcc}, {"cu_count", z}, {"array_count", z}, {"num_shader_banks", z},
			{"simd_arrays_per_engine", z}, {"cu_per_simd_array", z}, {"simd_per_cu", z},
			{"max_slots_scratch_cu", z}, {"gfx_target_version", gfx}, {"vendor_id", vendorID}, {"device_id", z},
			{"location_id", z}, {"domain", z}, {"drm_render_minor", z}, {"num_sdma_engines", z},
			{"num_sdma_xgmi_engines", z}, {"num_sdma_queues_per_engine", z}, {"num_cp_queues", z},
			{"max_engine_clk_ccompute", z}, {"max_engine_clk_fcompute", z},
			{"sdma_fw_version", jobj{{"uCodeSDMA", z}, {"uCodeRes", z}}},
			{"fw_version", jobj{{"uCode", z}, {"Major", z}, {"Minor", z}, {"Stepping", z}}},
			{"capability", capability()},
			{"cu_per_engine", z}, {"max_waves_per_cu", z}, {"family_id", z}, {"workgroup_max_size", wgMax},
			{"grid_max_size", z}, {"local_mem_size", z}, {"hive_id", z}, {"gpu_id", z},
			{"workgroup_max_dim", dim3(uint32(wgMax), uint32(wgMax), uint32(wgMax))}, {"grid_max_dim", dim3(0, 0, 0)},
			{"name", name}, {"vendor_name", vendor}, {"product_name", product}, {"model_name", model},
			{"node_id", a.node}, {"logical_node_id", a.logical}, {"logical_node_type_id", a.typeID},
			{"runtime_visibility", visible}, {"uuid", jobj{{"bytes", uuid}}},
			{"mem_banks", jarr{}}, {"caches", jarr{}}, {"io_links", jarr{}},
			{"gpu_index", a.gpuIndex},
		})
	}
	return out
}

func capability() jobj {
	var o jobj
	for _, k := range []string{"HotPluggable", "HSAMMUPresent", "SharedWithGraphics", "QueueSizePowerOfTwo",
		"QueueSize32bit", "QueueIdleEvent", "VALimit", "WatchPointsSupported", "WatchPointsTotalBits",
		"DoorbellType", "AQLQueueDoubleMap", "DebugTrapSupported", "WaveLaunchTrapOverrideSupported",
		"WaveLaunchModeSupported", "PreciseMemoryOperationsSupported", "DEPRECATED_SRAM_EDCSupport",
		"Mem_EDCSupport", "RASEventNotify", "ASICRevision", "SRAM_EDCSupport", "SVMAPISupported",
		"CoherentHostAccess", "DebugSupportedFirmware"} {
		o = append(o, jkv{k, uint64(0)})
	}
	return o
}

// requested lists, per GPU agent, the requested counters it has, by
// counter handle: rocprofv3 loads only those (metadata.cpp, init with
// counters).
func (r *AppRun) requested(a hsa.Agent) []string {
	want := map[string]bool{}
	for _, g := range r.Config.Groups {
		for _, c := range g {
			want[c] = true
		}
	}
	var out []string
	for _, b := range a.CounterBlocks {
		for _, c := range b.Counters {
			if want[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

func instanceID(counter uint64, i int) uint64 { return counter<<instanceIDBits | uint64(i) }

func dimensionInfo(n int) jobj {
	return jobj{{"id", uint64(dimensionXCC)}, {"instance_size", uint64(n)}, {"name", dimensionName}}
}

func (r *AppRun) jsonCounters() jarr {
	out := jarr{}
	for _, a := range r.gpus() {
		n := xccCount(a)
		for _, c := range r.requested(a) {
			h, _ := counterHandle(a, c)
			instances := jarr{}
			for i := 0; i < n; i++ {
				instances = append(instances, jobj{{"instance_id", instanceID(h, i)}, {"counter_id", handle(h)},
					{"dimensions", jarr{jobj{{"dimension_name", dimensionName}, {"index", uint64(i)}}}}})
			}
			block := counterBlock(a, c)
			out = append(out, jobj{
				{"agent_id", handle(agentHandle(a.ID))}, {"id", handle(h)}, {"is_constant", uint64(0)},
				{"is_derived", uint64(0)}, {"name", c}, {"description", block + " counter " + c},
				{"block", block}, {"expression", ""}, {"dimensions", jarr{dimensionInfo(n)}},
				{"instances", instances},
			})
		}
	}
	return out
}

func (r *AppRun) gpus() []hsa.Agent {
	gs := slices.Clone(r.Agents)
	sort.Slice(gs, func(i, j int) bool { return gs[i].ID < gs[j].ID })
	return gs
}

func (r *AppRun) jsonStrings() jobj {
	dims := jarr{}
	seen := map[int]bool{}
	var sizes []int
	for _, a := range r.gpus() {
		if n := xccCount(a); len(r.requested(a)) > 0 && !seen[n] {
			seen[n] = true
			sizes = append(sizes, n)
		}
	}
	slices.Sort(sizes)
	for _, n := range sizes {
		dims = append(dims, dimensionInfo(n))
	}
	return jobj{
		{"callback_records", nameTable(CallbackKindNames, callbackKindDispatch)},
		{"buffer_records", nameTable(BufferKindNames, bufferKindDispatch)}, {"marker_api", jarr{}},
		{"correlation_id", jobj{{"external", jarr{}}}},
		{"counters", jobj{{"dimension_ids", dims}}},
		{"pc_sample_instructions", jarr{}}, {"pc_sample_comments", jarr{}}, {"att_filenames", jarr{}},
		{"code_object_snapshot_filenames", jarr{}},
	}
}

// The SDK's name tables, as metadata.cpp fills strings.callback_records
// and strings.buffer_records (sdk::get_callback_tracing_names,
// get_buffer_tracing_names): one entry per tracing kind, indexed by the
// kind's enum value from NONE up (rocprofiler_iterate_*_tracing_kinds),
// each {"kind": name, "operations": [name by operation value]}
// (save.hpp, name_info). A kind's name is its enum name without the
// ROCPROFILER_*_TRACING_ prefix (callback_tracing.cpp, buffer_tracing.cpp);
// the kinds are those of fwd.h.
var (
	CallbackKindNames = []string{"NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API",
		"HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API", "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API",
		"MARKER_NAME_API", "CODE_OBJECT", "SCRATCH_MEMORY", "KERNEL_DISPATCH", "MEMORY_COPY", "RCCL_API", "OMPT",
		"MEMORY_ALLOCATION", "RUNTIME_INITIALIZATION", "ROCDECODE_API", "ROCJPEG_API", "HIP_STREAM",
		"MARKER_CORE_RANGE_API", "HIP_GRAPH", "ROCSHMEM_API", "HIPFILE_API"}
	BufferKindNames = []string{"NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API",
		"HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API", "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API",
		"MARKER_NAME_API", "MEMORY_COPY", "KERNEL_DISPATCH", "SCRATCH_MEMORY", "CORRELATION_ID_RETIREMENT",
		"RCCL_API", "OMPT", "MEMORY_ALLOCATION", "RUNTIME_INITIALIZATION", "ROCDECODE_API", "ROCJPEG_API",
		"HIP_STREAM", "HIP_RUNTIME_API_EXT", "HIP_COMPILER_API_EXT", "ROCDECODE_API_EXT", "KFD_EVENT_PAGE_MIGRATE",
		"KFD_EVENT_PAGE_FAULT", "KFD_EVENT_QUEUE", "KFD_EVENT_UNMAP_FROM_GPU", "KFD_EVENT_DROPPED_EVENTS",
		"KFD_PAGE_MIGRATE", "KFD_PAGE_FAULT", "KFD_QUEUE", "MARKER_CORE_RANGE_API", "HIP_GRAPH", "ROCSHMEM_API",
		"ROCSHMEM_API_EXT", "HIPFILE_API", "HIPFILE_API_EXT"}
	// KernelDispatchOperations are the kernel dispatch operations by value
	// (kernel_dispatch.cpp): what a kernel dispatch record's operation names.
	KernelDispatchOperations = []string{"KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_ENQUEUE", "KERNEL_DISPATCH_COMPLETE"}
)

const callbackKindDispatch = 12 // ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH

// nameTable is one name table. The operations of KERNEL_DISPATCH, the only
// kind prof's records carry, are listed; the other kinds' operations are
// the runtimes' API function lists and the like, which depend on the ROCm
// release and name nothing in prof's output, so they are left empty.
func nameTable(kinds []string, dispatch int) jarr {
	out := make(jarr, len(kinds))
	for i, k := range kinds {
		ops := jarr{}
		if i == dispatch {
			ops = strs(KernelDispatchOperations)
		}
		out[i] = jobj{{"kind", k}, {"operations", ops}}
	}
	return out
}

// jsonCodeObjects indexes code objects by id, entry 0 empty (metadata.cpp
// get_code_objects); the simulated kernels live in code object 1.
func (r *AppRun) jsonCodeObjects() jarr {
	z := uint64(0)
	empty := jobj{{"size", z}, {"code_object_id", z}, {"agent_id", handle(0)}, {"uri", ""},
		{"load_base", z}, {"load_size", z}, {"load_delta", z}, {"storage_type", z}}
	agent := uint64(0)
	if gs := r.gpus(); len(gs) > 0 {
		agent = agentHandle(gs[0].ID)
	}
	kernels := jobj{{"size", uint64(codeObjectSize)}, {"code_object_id", uint64(1)}, {"agent_id", handle(agent)},
		{"uri", "memory://" + Hostname + "#kernels"}, {"load_base", z}, {"load_size", z}, {"load_delta", z},
		{"storage_type", uint64(2)}, {"memory_base", z}, {"memory_size", z}}
	return jarr{empty, kernels}
}

// jsonKernelSymbols indexes kernel symbols by kernel id; kernel id 0 is
// named "0" and unused ids are empty (metadata.cpp get_kernel_symbols).
func (r *AppRun) jsonKernelSymbols() jarr {
	byID := map[uint64]replay.DispatchInfo{}
	var maxID uint64
	for _, c := range r.Counters {
		byID[c.Dispatch.KernelID] = c.Dispatch
		maxID = max(maxID, c.Dispatch.KernelID)
	}
	for _, k := range r.Kernels {
		byID[k.Dispatch.KernelID] = k.Dispatch
		maxID = max(maxID, k.Dispatch.KernelID)
	}
	z := uint64(0)
	symbol := func(id, codeObject, size uint64, name, formatted string, group, private uint32, sgpr, vgpr uint64) jobj {
		return jobj{{"size", size}, {"kernel_id", id}, {"code_object_id", codeObject}, {"kernel_name", name},
			{"kernel_object", z}, {"kernarg_segment_size", z}, {"kernarg_segment_alignment", z},
			{"group_segment_size", uint64(group)}, {"private_segment_size", uint64(private)},
			{"sgpr_count", sgpr}, {"arch_vgpr_count", vgpr}, {"accum_vgpr_count", uint64(accumVGPRCount)},
			{"kernel_code_entry_byte_offset", z}, {"kernel_address", handle(0)},
			{"formatted_kernel_name", formatted}, {"demangled_kernel_name", formatted}, {"truncated_kernel_name", formatted}}
	}
	out := jarr{symbol(0, 0, 0, "", "0", 0, 0, 0, 0)}
	for id := uint64(1); id <= maxID; id++ {
		d, ok := byID[id]
		if !ok {
			out = append(out, symbol(0, 0, 0, "", "", 0, 0, 0, 0))
			continue
		}
		out = append(out, symbol(id, 1, kernelSymbolSize, d.KernelName, r.kernelName(d), d.GroupSegmentSize,
			d.PrivateSegmentSize, sgprCount, vgprCount))
	}
	return out
}

func hostFunction() jobj {
	z := uint64(0)
	return jobj{{"size", z}, {"host_function_id", z}, {"kernel_id", z}, {"code_object_id", z},
		{"host_function", handle(0)}, {"modules", handle(0)}, {"device_function", ""}, {"thread_limit", z},
		{"thread_ids", dim3(0, 0, 0)}, {"block_ids", dim3(0, 0, 0)}, {"block_dims", dim3(0, 0, 0)},
		{"grid_dims", dim3(0, 0, 0)}, {"workgroup_size", z}}
}

func statsJSON(s stats) jobj {
	return jobj{{"count", s.count}, {"sum", s.sum}, {"sqr", s.sqr}, {"min", s.min}, {"max", s.max},
		{"mean", jdbl(s.mean())}, {"stddev", jdbl(s.stddev())}, {"variance", jdbl(s.variance())}}
}

// jsonSummary is the domain statistics, present when --stats computed them
// (tool.cpp generate_output): kernel dispatch only, operations by name.
func (r *AppRun) jsonSummary() jarr {
	if !r.Config.Stats() || len(r.Kernels) == 0 {
		return jarr{}
	}
	list, total := r.kernelStats()
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name }) // a std::map by name
	ops := jarr{}
	for _, s := range list {
		ops = append(ops, jobj{{"key", s.name}, {"value", statsJSON(s)}})
	}
	st := append(statsJSON(total), jkv{"operations", ops})
	return jarr{jobj{{"domain", "KERNEL_DISPATCH"}, {"stats", st}}}
}

func dispatchInfoJSON(d replay.DispatchInfo) jobj {
	return jobj{{"size", d.Size}, {"agent_id", handle(agentHandle(d.AgentID))}, {"queue_id", handle(uint64(d.QueueID))},
		{"kernel_id", d.KernelID}, {"dispatch_id", d.DispatchID},
		{"private_segment_size", uint64(d.PrivateSegmentSize)}, {"group_segment_size", uint64(d.GroupSegmentSize)},
		{"workgroup_size", dim3(d.WorkgroupSize.X, d.WorkgroupSize.Y, d.WorkgroupSize.Z)},
		{"grid_size", dim3(d.GridSize.X, d.GridSize.Y, d.GridSize.Z)}}
}

func asyncCorrelation(c replay.CorrelationID) jobj {
	return jobj{{"internal", c.Internal}, {"external", c.External.Value}}
}

// jsonCounterRecords writes every counter record: one {counter_id, value}
// per dimension instance, a double value, and replay_pass on every record
// (0 for a dispatch that was not replayed), as the kernel replay writer
// does (counter_info.hpp).
func (r *AppRun) jsonCounterRecords() jarr {
	out := jarr{}
	for _, rec := range r.Counters {
		n := xccCount(r.agent(rec.Dispatch.AgentID))
		values := jarr{}
		for _, c := range r.counterTotals(rec) {
			for _, v := range splitInstances(c.value, n) {
				values = append(values, jobj{{"counter_id", handle(c.handle)}, {"value", jdbl(float64(v))}})
			}
		}
		out = append(out, jobj{
			{"thread_id", threadID(rec.Thread)},
			{"dispatch_data", jobj{{"size", uint64(dispatchDataSize)}, {"correlation_id", asyncCorrelation(rec.Correlation)},
				{"start_timestamp", rec.Start}, {"end_timestamp", rec.End}, {"dispatch_info", dispatchInfoJSON(rec.Dispatch)}}},
			{"records", values},
			{"stream_id", handle(0)},
			{"replay_pass", rec.Pass},
		})
	}
	return out
}

// jsonBufferRecords lists every buffer record array, empty or not; kernel
// dispatch records are kind 11 (KERNEL_DISPATCH), operation 2 (COMPLETE),
// with the tool's stream id (stream_info.hpp).
func (r *AppRun) jsonBufferRecords() jobj {
	dispatches := jarr{}
	for _, k := range r.Kernels {
		dispatches = append(dispatches, jobj{
			{"size", uint64(kernelRecordSize)}, {"kind", uint64(bufferKindDispatch)}, {"operation", uint64(opDispatchComplete)},
			{"thread_id", threadID(k.Thread)}, {"correlation_id", asyncCorrelation(k.Correlation)},
			{"start_timestamp", k.Start}, {"end_timestamp", k.End}, {"dispatch_info", dispatchInfoJSON(k.Dispatch)},
			{"stream_id", handle(0)},
		})
	}
	o := jobj{{"kernel_dispatch", dispatches}}
	for _, k := range []string{"hip_api", "hsa_api", "marker_api", "rccl_api", "memory_copy", "memory_allocation",
		"scratch_memory", "kfd", "rocdecode_api", "rocjpeg_api", "hipfile_api", "pc_sample_host_trap",
		"pc_sample_stochastic", "hip_graph", "rocshmem_api"} {
		o = append(o, jkv{k, jarr{}})
	}
	return o
}

// ConfigJSON renders config.json (--output-config): the whole tool
// configuration as tool.cpp generate_config_output writes it, indented by
// 2. Its counters (the requested groups, each a set) and kernel_replay are
// what the validator reads to know what pass i should hold.
func (r *AppRun) ConfigJSON(specName, outputDir string) []byte {
	cfg := r.Config
	v := cfg.Values
	groups := jarr{}
	for _, g := range cfg.Groups {
		groups = append(groups, strs(g))
	}
	var launches []int
	if v.has("kernel_iteration_range") {
		set, _ := parseIterationRange(joinWords(v.list("kernel_iteration_range")))
		for n := range set {
			launches = append(launches, int(n))
		}
		slices.Sort(launches)
	}
	rangeJSON := jarr{}
	for _, n := range launches {
		rangeJSON = append(rangeJSON, uint64(n))
	}
	include := v.str("kernel_include_regex")
	if include == "" {
		include = ".*"
	}
	f := false
	z := uint64(0)
	config := jobj{
		{"benchmark_mode", ""}, {"kernel_trace", cfg.KernelTrace()}, {"hip_graph_trace", f},
		{"hsa_core_api_trace", f}, {"hsa_amd_ext_api_trace", f}, {"hsa_image_ext_api_trace", f},
		{"hsa_finalizer_ext_api_trace", f}, {"marker_api_trace", f}, {"memory_copy_trace", f},
		{"memory_allocation_trace", f}, {"kfd_page_migration_trace", f}, {"kfd_page_mapping_trace", f},
		{"kfd_queue_trace", f}, {"kfd_dropped_events_trace", f}, {"scratch_memory_trace", f},
		{"counter_collection", len(cfg.Groups) > 0}, {"hip_runtime_api_trace", f}, {"hip_compiler_api_trace", f},
		{"rccl_api_trace", f}, {"rocdecode_api_trace", f}, {"rocjpeg_api_trace", f}, {"ompt_trace", f},
		{"ompt_trace_operations", ""}, {"rocshmem_api_trace", f}, {"hipfile_api_trace", f}, {"hip_event_trace", f},
		{"collection_periods", jobj{{"container", jarr{}}}}, {"counters", groups}, {"spm_counters", jarr{}},
		{"spm_sample_interval", z}, {"spm_sample_interval_unit", "none"}, {"spm_sample_interval_unit_value", z},
		{"extra_counters_contents", ""}, {"kernel_filter_include", include},
		{"kernel_filter_exclude", v.str("kernel_exclude_regex")}, {"kernel_filter_range", rangeJSON},
		{"demangle", !v.on("mangled_kernels")}, {"truncate", v.on("truncate_kernels")}, {"minimum_output_bytes", z},
		{"enable_signal_handlers", true}, {"enable_process_sync", f}, {"selected_regions", f},
		{"selected_regions_ref_count", f}, {"attach_output_generation_sync", f},
		{"counter_groups_random_seed", z}, {"counter_groups_interval", uint64(1)},
		{"pc_sampling_host_trap", f}, {"pc_sampling_stochastic", f}, {"pc_sampling_method", "none"},
		{"pc_sampling_unit", "none"}, {"pc_sampling_interval", uint64(1)}, {"pc_sampling_method_value", z},
		{"pc_sampling_unit_value", z}, {"kernel_replay", cfg.KernelReplay}, {"kernel_replay_att_after_groups", z},
		{"advanced_thread_trace", f}, {"att_no_intercept", f}, {"att_serialize_all", f}, {"att_no_detail", f},
		{"att_resource_mode", "code-object"}, {"att_param_shader_engine_mask", uint64(1)},
		{"att_param_buffer_size", uint64(0x18000000)}, {"att_param_simd_select", uint64(0xF)},
		{"att_param_target_cu", uint64(1)}, {"att_library_path", ""}, {"att_param_perfcounters", jarr{}},
		{"att_param_perf_ctrl", z}, {"att_consecutive_kernels", z},
	}
	config = append(config, r.outputConfig(outputDir)...)
	doc := jobj{{"rocprofiler-sdk-tool", jarr{jobj{{"metadata", jobj{
		{"pid", uint64(PID)}, {"init_time", r.InitTime}, {"fini_time", r.FiniTime},
		{"config", config}, {"command", jarr{"replayspec-app", specName}},
		{"build_spec", jobj{{"version_major", z}, {"version_minor", z}, {"version_patch", z}, {"soversion", z},
			{"compiler_id", "replayspec"}, {"compiler_version", ""}, {"git_describe", ""}, {"git_revision", ""},
			{"library_arch", ""}, {"system_name", "Linux"}, {"system_processor", "x86_64"}, {"system_version", ""}}},
		{"environment", jobj{}},
	}}}}}}
	return marshalJSON(doc, 2)
}
