package redistest

import (
	"testing"
	"time"
)

// Eventually polls cond every 5 ms until it holds, and fails the test
// ("after d: what") once d has passed without it. It is the tests' wait
// for a condition: never a fixed sleep in its place.
func Eventually(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
