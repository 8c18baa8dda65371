package exectarget_test

import (
	"os"
	"testing"

	"github.com/replayspec/replayspec/target/exec"
)

func TestMain(m *testing.M) {
	exectarget.ReaperMain() // this test binary is the drivers' reaper too
	os.Exit(m.Run())
}
