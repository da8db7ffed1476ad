//go:build race

package server

// raceEnabled: this test binary runs under the race detector (memory
// bounds are not asserted then: the detector multiplies allocations).
const raceEnabled = true
