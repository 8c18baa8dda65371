package cuda

import "time"

// reanchorAfter bounds how far an event time is measured from its anchor:
// cuEventElapsedTime returns float32 ms, whose step grows with the span
// (about 0.06 us at 1 s, 1 us at 16 s).
const reanchorAfter = time.Second

// deviceClock turns CUDA events into ns on the host's monotonic clock since
// Open: an anchor event is recorded on the idle device and the host reads
// its clock right after the event completes; a later event's time is the
// anchor's host time plus the events' elapsed time. The anchor lags the true
// device time by the sync latency (microseconds), equally for every kernel.
type deviceClock struct {
	epoch time.Time

	// Touched on the driver thread only.
	anchor     uintptr
	anchorHost uint64
	last       uint64 // times never go backwards across re-anchoring

}

func newDeviceClock(d *driver) (*deviceClock, error) {
	ev, err := d.newEvent()
	if err != nil {
		return nil, err
	}
	c := &deviceClock{epoch: time.Now(), anchor: ev}
	return c, c.reanchor(d)
}

func (c *deviceClock) now() uint64 { return uint64(time.Since(c.epoch)) }

// reanchor records the anchor on the legacy default stream, which waits for
// all earlier work, so call it only while the device is idle.
func (c *deviceClock) reanchor(d *driver) error {
	if err := d.record(c.anchor, 0); err != nil {
		return err
	}
	if err := call("cuEventSynchronize", d.eventSynchronize, c.anchor); err != nil {
		return err
	}
	c.anchorHost = c.now()
	return nil
}

// maybeReanchor renews an old anchor before a timed launch (idle device).
func (c *deviceClock) maybeReanchor(d *driver) error {
	if c.now()-c.anchorHost < uint64(reanchorAfter) {
		return nil
	}
	return c.reanchor(d)
}

// span converts a completed pair of events to host-clock ns.
func (c *deviceClock) span(d *driver, start, end uintptr) (uint64, uint64, error) {
	s, err := d.elapsedNs(c.anchor, start)
	if err != nil {
		return 0, 0, err
	}
	e, err := d.elapsedNs(c.anchor, end)
	if err != nil {
		return 0, 0, err
	}
	t0 := c.anchorHost + uint64(max(s, 0))
	t1 := c.anchorHost + uint64(max(e, 0))
	t0 = max(t0, c.last)
	t1 = max(t1, t0)
	c.last = t1
	return t0, t1, nil
}

func (c *deviceClock) destroy(d *driver) { d.destroyEvent(c.anchor) }
