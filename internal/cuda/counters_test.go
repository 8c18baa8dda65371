package cuda

import "testing"

func TestCounterValues(t *testing.T) {
	cases := []struct {
		kernel, counter string
		grid, want      uint64
	}{
		{"increment", "SQ_WAVES", 1000, 16},
		{"increment", "SQ_INSTS_VALU", 1000, 3000},
		{"saxpy", "SQ_INSTS_SALU", 128, 2 * 4},
		{"fill", "GRBM_COUNT", 77, 77},
		{"accumulate", "GRBM_GUI_ACTIVE", 65, 2},
	}
	for _, c := range cases {
		got, err := counterValue(c.kernel, c.grid, c.counter)
		if err != nil || got != c.want {
			t.Errorf("%s %s grid %d = %d, %v; want %d", c.kernel, c.counter, c.grid, got, err, c.want)
		}
	}
	if _, err := counterValue("increment", 1, "NOPE"); err == nil {
		t.Error("unknown counter accepted")
	}
}

func TestEveryAdvertisedCounterHasAValue(t *testing.T) {
	for _, b := range counterBlocks {
		for _, c := range b.Counters {
			if _, err := counterValue("increment", 64, c); err != nil {
				t.Error(err)
			}
		}
	}
}
