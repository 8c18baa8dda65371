package exectarget

// SplitCommand is splitCommand for the external tests.
var SplitCommand = splitCommand

// UseReaper turns the reaper on or off for a test; it returns the setting
// to restore.
func UseReaper(on bool) (was bool) {
	was, reaperOn = reaperOn, on
	return was
}
