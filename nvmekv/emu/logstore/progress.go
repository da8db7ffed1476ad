package logstore

import "time"

// Progress is how far Open got rebuilding the index (Options.Progress).
type Progress struct {
	// Method is "checkpoint" (reading the index Close saved), "scan"
	// (replaying every region) or "fresh" (a new store: nothing to read).
	Method string
	// Done and Total are the bytes of the method's input read so far and
	// in all: the checkpoint file, or the regions to replay (the region
	// headers are read first, uncounted). Within one method Done never
	// decreases; a checkpoint found unusable part way is followed by a
	// scan, whose reports start again from 0 (E27).
	Done, Total int64
	// Keys is how many keys the index holds so far.
	Keys int
	// Elapsed is the time since the index began to be rebuilt.
	Elapsed time.Duration
	// Finished marks the last report: the index is whole, Done equals
	// Total and Method says how it was rebuilt.
	Finished bool
}

// Percent is Done of Total in percent; 100 when there is nothing to read.
func (p Progress) Percent() float64 {
	if p.Total <= 0 {
		return 100
	}
	return 100 * float64(p.Done) / float64(p.Total)
}

// progress reports recovery to Options.Progress: once per region replayed
// or per checkpointChunk entries read, never per record, and nothing is
// allocated for a report.
type progress struct {
	f      func(Progress)
	start  time.Time
	method string // of the last report
	total  int64
}

// report tells how far method got: done of total bytes, keys in the index.
func (p *progress) report(method string, done, total int64, keys int) {
	p.method, p.total = method, total
	if p.f != nil {
		p.f(Progress{Method: method, Done: done, Total: total, Keys: keys, Elapsed: time.Since(p.start)})
	}
}

// finish is the last report: the index holds keys, rebuilt by method.
func (p *progress) finish(method string, keys int) {
	if p.f == nil {
		return
	}
	total := p.total
	if method != p.method {
		total = 0 // fresh: nothing was read
	}
	p.f(Progress{Method: method, Done: total, Total: total, Keys: keys, Elapsed: time.Since(p.start), Finished: true})
}
