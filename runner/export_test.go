package runner

// SetStreamSegments sets how many events a streamed run's segments hold
// at least (0: cut at every chance), and returns what undoes it.
func SetStreamSegments(events int) (restore func()) {
	old := segmentEvents
	segmentEvents = events
	return func() { segmentEvents = old }
}
