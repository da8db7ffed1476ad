//go:build race

package emu

// raceEnabled: this test binary runs under the race detector, which
// would report TestBigValueReadAheadOneP's deliberate unsynchronized look
// at the buffer a Get fills.
const raceEnabled = true
