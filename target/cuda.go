package target

func openCUDA() (Target, error) {
	return nil, &Unavailable{"target cuda: not built yet"}
}
