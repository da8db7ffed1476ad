package uring

import (
	"runtime"
	"testing"
)

// lockThread locks the test goroutine to its OS thread until cleanup (needed
// for SingleIssuer rings).
func lockThread(t testing.TB) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}
