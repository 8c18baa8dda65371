package spec

import "slices"

// Defaults for what a spec may leave out.
const (
	DefaultQueue     = "q0"
	DefaultThread    = 1
	DefaultWorkgroup = 64
	DefaultPackets   = 1
	DefaultKind      = "device"
	DefaultMaxPasses = 10000
)

// Defaults returns s with every default written out, so that runners never
// guess: queue q0, thread 1, grid = elements of the first argument buffer,
// workgroup 64, packets 1 (or the kernel packets, and the barriers between them), kernel_packets 1, buffer kind device, max_passes 10000, passes
// none and contexts started. s itself is not changed.
func Defaults(s Spec) Spec {
	s.Contexts = slices.Clone(s.Contexts)
	for i := range s.Contexts {
		if s.Contexts[i].Start == nil {
			started := true
			s.Contexts[i].Start = &started
		}
	}
	s.Tool.Plan = planDefaults(s.Tool.Plan)
	s.Application.Buffers = slices.Clone(s.Application.Buffers)
	elements := map[string]uint64{}
	for i := range s.Application.Buffers {
		b := &s.Application.Buffers[i]
		if b.Kind == "" {
			b.Kind = DefaultKind
		}
		elements[b.Name] = b.Elements
	}
	s.Application.Dispatches = slices.Clone(s.Application.Dispatches)
	for i := range s.Application.Dispatches {
		d := &s.Application.Dispatches[i]
		if d.Queue == "" {
			d.Queue = DefaultQueue
		}
		if d.Thread == 0 && !d.ByTool { // the tool's own dispatch runs where its callback does
			d.Thread = DefaultThread
		}
		if d.Grid == 0 && len(d.Args) > 0 {
			d.Grid = uint32(min(elements[d.Args[0]], MaxElements))
		}
		if d.Workgroup == 0 {
			d.Workgroup = DefaultWorkgroup
		}
		if d.KernelPackets == 0 && !d.ByTool {
			d.KernelPackets = DefaultPackets
		}
		if d.Packets == 0 && !d.ByTool {
			d.Packets = max(DefaultPackets, d.KernelPackets)
			if d.BarriersBetween && d.KernelPackets >= 2 {
				d.Packets = 2*d.KernelPackets - 1 // the barriers between count too (validate)
			}
		}
		if d.Plan != nil {
			p := planDefaults(*d.Plan)
			d.Plan = &p
		}
	}
	if s.Limits.MaxPasses == 0 {
		s.Limits.MaxPasses = DefaultMaxPasses
	}
	return s
}

func planDefaults(p Plan) Plan {
	if p.Passes == "" {
		p.Passes = PassesNone
	}
	return p
}
