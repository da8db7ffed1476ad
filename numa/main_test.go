package numa

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// epermChild, set on platforms that can filter syscalls, is what the child
// process of TestEPERMClearMessage runs instead of the tests.
var epermChild func() int

func TestMain(m *testing.M) {
	if os.Getenv("TIERCACHE_NUMA_EPERM_CHILD") == "1" && epermChild != nil {
		os.Exit(epermChild())
	}
	goleak.VerifyTestMain(m)
}
