package tier

import (
	"sync/atomic"
	"time"
)

// wallClock is the default Clock: the wall clock at its last sync plus
// the monotonic time since. time.Now reads both the wall and the monotonic
// clock (two vDSO calls); this reads the monotonic clock alone, once per
// read of the directory's expiries (GET, MGET, SET). It syncs with the
// wall clock again once a second has passed since the last sync, so a step
// of the system clock is followed within a second, and a slew (NTP's at
// most 500 ppm) drifts it at most half a millisecond before that.
type wallClock struct {
	base atomic.Pointer[time.Time] // time.Now at the last sync, with its monotonic reading
}

// wallSyncEvery is how long the clock runs on the monotonic clock alone.
const wallSyncEvery = time.Second

func newWallClock() *wallClock {
	w := &wallClock{}
	w.sync()
	return w
}

func (w *wallClock) sync() {
	t := time.Now()
	w.base.Store(&t)
}

// now returns unix nanoseconds.
func (w *wallClock) now() int64 {
	b := w.base.Load()
	d := time.Since(*b) // the monotonic clock only
	if d >= wallSyncEvery || d < 0 {
		w.sync()
		return time.Now().UnixNano()
	}
	return b.UnixNano() + int64(d)
}

// at is the clock's time at t, a monotonic reading the caller took (or
// derived from one by Add) since the last sync: no clock read. A t
// before the last sync, or a second or more after it, reads the clock.
func (w *wallClock) at(t time.Time) int64 {
	b := w.base.Load()
	d := t.Sub(*b) // both monotonic: arithmetic only
	if d >= wallSyncEvery || d < 0 {
		return w.now()
	}
	return b.UnixNano() + int64(d)
}

// Now is the cache's time, unix nanoseconds: what decides its TTLs
// (Options.Clock). The server's hash field expiries follow it too.
func (c *Cache) Now() int64 { return c.now() }

// NowOf is Now at t, a time.Now reading (with its monotonic clock, or
// one derived from such by Add) the caller took for the command it runs:
// the default clock turns it into the cache's time without reading the
// clock again; a Clock given in Options is read.
func (c *Cache) NowOf(t time.Time) int64 {
	if c.o.wall != nil {
		return c.o.wall.at(t)
	}
	return c.now()
}
