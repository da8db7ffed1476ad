package vmtest

import (
	"os"
	"testing"
)

// skipOrFail skips with the reason, or fails with it when
// TIERCACHE_NO_SKIP=1 (scripts/test as root, CI).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("TIERCACHE_NO_SKIP") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
