package target

func openExec(cmd string) (Target, error) {
	return nil, &Unavailable{"target exec:" + cmd + ": the driver protocol is not built yet"}
}
