package tier

import (
	"sync"

	"github.com/tiercache/tiercache/flusher"
	"github.com/tiercache/tiercache/policy"
	"github.com/tiercache/tiercache/tier/dram"
)

// placeFor is the log a value of n bytes goes to: hot up to HotMaxValue,
// else warm if a warm segment holds it, else none (cold only).
func (c *Cache) placeFor(n int) memTier {
	if n <= c.o.HotMaxValue && n <= c.mem.logs[memHot].SegmentBytes() {
		return memHot
	}
	if w := c.mem.logs[memWarm]; w != nil && n <= w.SegmentBytes() {
		return memWarm
	}
	return memNone
}

// KeepsOwned reports whether Set keeps a value of n bytes given with
// SetOptions.Owned (T47): in writethrough, or when no DRAM log takes
// values of its size. Otherwise the value is copied into a DRAM record,
// and the caller may use its slice again once Set returned.
func (c *Cache) KeepsOwned(n int) bool {
	return n > joinStep && (c.writeThrough() || c.placeFor(n) == memNone)
}

// reservation is a DRAM record placeLocked will fill: a new one (loc in
// log where), or e's own when it can be written in place.
type reservation struct {
	loc     dram.Loc
	where   memTier
	b       []byte
	inPlace bool
}

// reserveLocked finds room for an n-byte value of e (sh's write lock
// held; e may be an entry not in the map yet): e's record itself when it
// has n bytes and is not being flushed (an overwrite in place: no reader
// holds the shard lock now, and the record is this entry's alone), else a
// new record in hot (values up to HotMaxValue) or warm, without a
// cleaning (the caller made room first). ok is false when no log has
// room, or none takes n bytes.
func (c *Cache) reserveLocked(e *entry, n int) (r reservation, ok bool) {
	m := c.mem
	w := c.placeFor(n)
	if w == memNone {
		return r, false
	}
	if e.loc != 0 && !e.flushing && e.where == w && int(e.recSize) == n {
		return reservation{loc: e.loc, where: w, b: m.bytesOf(e), inPlace: true}, true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	loc, b, ok := m.allocLocked(w, n, e, writerKeep)
	if !ok && w == memHot && m.logs[memWarm] != nil && n <= m.logs[memWarm].SegmentBytes() {
		w = memWarm
		loc, b, ok = m.allocLocked(w, n, e, writerKeep)
	}
	return reservation{loc: loc, where: w, b: b}, ok
}

// placeLocked gives e, live at the version it now has, the record r holds
// with v copied into it, and makes it resident in the LFU (sh's write
// lock held). The record of e's previous version is replaced (freed, or
// overwritten in place). The LFU may evict keys (this one too): they are
// released by processVictims, which the caller runs once it unlocked.
func (c *Cache) placeLocked(e *entry, r reservation, v []byte) {
	m := c.mem
	if !r.inPlace {
		c.releaseLocked(e)
	}
	copy(r.b, v)
	e.loc, e.where, e.recSize = r.loc, r.where, uint32(len(v))
	e.unmark(markTouched)
	m.mu.Lock()
	m.admitLocked(e, len(v))
	m.mu.Unlock()
}

// placeOrDropLocked is placeLocked when room may be had: with no room, e
// has no DRAM record and leaves the LFU, and it reports false.
func (c *Cache) placeOrDropLocked(e *entry, v []byte) bool {
	r, ok := c.reserveLocked(e, len(v))
	if !ok {
		c.releaseLocked(e)
		c.memRemove(e)
		return false
	}
	c.placeLocked(e, r, v)
	return true
}

// releaseLocked takes e's record away (sh's write lock held): a record
// being flushed becomes the flusher item's, which frees it when the write
// ends (flushDone, flushDropped); any other is freed now. e stays in the
// LFU (its caller decides).
func (c *Cache) releaseLocked(e *entry) {
	if e.loc == 0 {
		return
	}
	if e.where == memLive {
		c.dropLiveLocked(e)
	} else if e.flushing {
		e.flushing = false
	} else {
		c.mem.mu.Lock()
		c.mem.freeLocked(e.where, e.loc, int(e.recSize))
		c.mem.mu.Unlock()
	}
	e.loc, e.where, e.recSize = 0, memNone, 0
}

// memRemove takes e out of the LFU (its record already released, or about
// to be).
func (c *Cache) memRemove(e *entry) {
	c.mem.mu.Lock()
	c.mem.lfuOf(e).Remove(&e.node)
	c.mem.mu.Unlock()
}

// memAccess records a read served from e's record in the LFU.
func (c *Cache) memAccess(e *entry) {
	c.mem.mu.Lock()
	c.mem.lfuOf(e).Access(&e.node)
	c.mem.mu.Unlock()
}

// memAccessOutranks is memAccess for a warm hit: it also reports whether
// the LFU counts e's key more often than the records hot's cleaning
// demoted lately (T56): moving it to hot pushes one of those out, and a
// swap with a record read as often gains nothing and costs copies (the
// promotion's, the demotion's, and warm's compaction to take the
// demoted record back: docs/BENCHMARKS.md). While hot has a free segment
// beyond those its writers keep, a promotion pushes nothing out, and the
// average, renewed only by demotions, may be stale: any count passes.
func (c *Cache) memAccessOutranks(e *entry) bool {
	m := c.mem
	m.mu.Lock()
	l := m.lfuOf(e)
	l.Access(&e.node)
	ok := m.logs[memHot].FreeSegments() > writerKeep || int64(l.Frequency(e.node.Hash()))*demotedScale > m.demotedFreq
	m.mu.Unlock()
	return ok
}

// demotedScale is the fixed point of mem.demotedFreq, and demotedWindow
// the number of demotions its moving average weighs most.
const (
	demotedScale  = 1024
	demotedWindow = 64
)

// noteDemotedLocked counts e's demotion from hot into mem.demotedFreq
// (mem.mu held).
func (m *mem) noteDemotedLocked(e *entry) {
	f := int64(m.lfuOf(e).Frequency(e.node.Hash())) * demotedScale
	m.demotedFreq += (f - m.demotedFreq) / demotedWindow
}

// hashOf is the hash the LFU and the shards use for e's key.
func hashOf(e *entry) uint64 {
	lo, _ := hashKey(viewBytes(e.key))
	return lo
}

// processVictims releases the records of the keys the LFU evicted, each
// under its shard's lock: to cold, written from where it is, or lost
// without a cold tier that takes it. It reports how many it released.
// Any goroutine holding no shard lock may run it.
func (c *Cache) processVictims() int {
	m := c.mem
	if !m.hasVictims.Load() {
		return 0
	}
	m.mu.Lock()
	vs := m.victims
	m.victims = nil
	m.hasVictims.Store(false)
	m.mu.Unlock()
	defer func() { // the slice goes back for the next victims, unless others are there already
		clear(vs)
		m.mu.Lock()
		if m.victims == nil {
			m.victims = vs[:0]
		}
		m.mu.Unlock()
	}()
	n := 0
	for _, e := range vs {
		c.throttle() // victims wait for the device rather than overflow the flusher (T25)
		sh := c.dir.shard(e.node.Hash())
		sh.mu.Lock()
		if e.loc != 0 && !e.flushing && e.state == stateLive && c.stale(e) {
			c.releaseLocked(e) // flushed (T14): nothing to keep, nowhere to write it
		} else if e.loc != 0 && !e.flushing && e.state == stateLive {
			m.mu.Lock()
			resident := e.node.Resident()
			if !resident {
				m.evicted[e.where]++
				m.tenantEvicted[e.tenant]++
			}
			m.mu.Unlock()
			if !resident {
				c.evictLocked(sh, e)
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// evictLocked sends e's record out of DRAM (sh's write lock held; e is
// live, has a record and is not in the LFU): nowhere if cold holds this
// version already (T18), to cold written from where it is if cold takes
// writes (the record stays readable until the write completes), else the
// key is lost (T7).
func (c *Cache) evictLocked(sh *shard, e *entry) {
	if e.where == memLive {
		c.evictLiveLocked(sh, e)
		return
	}
	if c.fl != nil && c.coldHolds(e, e.ver) {
		c.releaseLocked(e)
		return
	}
	if c.coldTakesWrites() {
		e.flushing = true
		c.mem.mu.Lock()
		c.mem.pinned[e.where] += int64(e.recSize)
		c.mem.mu.Unlock()
		e.coldMayHold()
		pw := newPinnedWrite()
		pw.p = pinned{where: e.where, loc: e.loc, n: int(e.recSize)}
		pw.it = flusher.Item{Key: viewBytes(e.key), Value: c.mem.bytesOf(e), Version: e.ver, Expiry: e.exp,
			Flags: coldFlags(e.kind), Ref: pw, OffHeap: true}
		if err := c.fl.Enqueue(&pw.it); err == nil {
			c.st.flushed.Add(1)
			return
		}
		releaseWrite(&pw.it) // not accepted: still ours
		e.flushing = false
		c.mem.mu.Lock()
		c.mem.pinned[e.where] -= int64(e.recSize)
		c.mem.mu.Unlock()
	}
	c.releaseLocked(e)
	c.loseLocked(sh, viewBytes(e.key), e)
}

// pinned is a DRAM record a flusher item writes to cold from where it is;
// it is freed when the item ends (flushDone, flushDropped).
type pinned struct {
	where memTier
	loc   dram.Loc
	n     int
}

// pinnedWrite is the flusher item of a DRAM record written to cold from
// where it is, with the record's place (the item's Ref is the
// pinnedWrite): one allocation, reused once the flusher released it
// (releaseWrite, flusher F13), so evictions allocate nothing.
type pinnedWrite struct {
	it flusher.Item
	p  pinned
}

// pinnedWrites keeps released pinnedWrites for the next evictions, up to
// maxSpareWrites: a free list rather than a sync.Pool, which the
// collector empties, so that reuse does not depend on how often it runs.
var pinnedWrites struct {
	mu    sync.Mutex
	spare []*pinnedWrite
}

const maxSpareWrites = 8192 // about what writers let the flusher hold (flushHigh) in 512-byte records

// newPinnedWrite returns a spare pinnedWrite, or a new one.
func newPinnedWrite() *pinnedWrite {
	pinnedWrites.mu.Lock()
	defer pinnedWrites.mu.Unlock()
	if n := len(pinnedWrites.spare); n > 0 {
		pw := pinnedWrites.spare[n-1]
		pinnedWrites.spare = pinnedWrites.spare[:n-1]
		return pw
	}
	return new(pinnedWrite)
}

// pinnedOf is the record an item writes from DRAM, or nil for another
// item.
func pinnedOf(it *flusher.Item) *pinned {
	if pw, ok := it.Ref.(*pinnedWrite); ok {
		return &pw.p
	}
	return nil
}

// releaseWrite is the flusher's OnRelease: a pinnedWrite goes back to its
// pool, cleared (no key, value or entry held).
func releaseWrite(it *flusher.Item) {
	if pw, ok := it.Ref.(*pinnedWrite); ok {
		*pw = pinnedWrite{}
		pinnedWrites.mu.Lock()
		if len(pinnedWrites.spare) < maxSpareWrites {
			pinnedWrites.spare = append(pinnedWrites.spare, pw)
		}
		pinnedWrites.mu.Unlock()
	}
}

// endPinned ends the flush of a record written from DRAM (sh's write lock
// held): if e still holds it, e's record goes (written: cold holds the
// version now; failed or dropped: the key is lost, T7); else it was
// released to the item, which frees it.
func (c *Cache) endPinned(sh *shard, e *entry, it *flusher.Item, p *pinned, ok bool) {
	c.unpin(p)
	if ok && e != nil {
		sh.setHeader(e, true)
	}
	if e != nil && e.flushing && e.loc == p.loc && e.where == p.where && e.state == stateLive && e.ver == it.Version {
		e.flushing = false
		if ok {
			e.coldWritten(it.Version, it.Expiry)
			c.releaseLocked(e)
			c.forgetColdOnlyLocked(sh, e)
			return
		}
		c.releaseLocked(e)
		c.loseLocked(sh, it.Key, e)
		return
	}
	c.mem.mu.Lock()
	c.mem.freeLocked(p.where, p.loc, p.n)
	c.mem.mu.Unlock()
}

// unpin ends a pinned record's account: its write ended, one way or the
// other.
func (c *Cache) unpin(p *pinned) {
	c.mem.mu.Lock()
	c.mem.pinned[p.where] -= int64(p.n)
	c.mem.mu.Unlock()
}

// loseLocked forgets key, whose only copy is gone (T7).
func (c *Cache) loseLocked(sh *shard, key []byte, e *entry) {
	c.purgeLocked(sh, key, e)
	c.st.lost.Add(1)
	c.removed(key, Evicted)
}

// makeRoom cleans log w, with no lock held, until an allocation of n
// bytes that keeps writerKeep segments free succeeds without cleaning; it
// reports false after memRounds rounds (or when w is absent). Hot is
// cleaned oldest segment first while there is a warm log: its records go
// to warm (which makes room for them first), except those read since they
// were placed, which stay in hot once (up to half a segment a cleaning);
// while warm has no room for them, hot compacts instead. Warm, and hot
// without warm, are cleaned sparsest segment first, their
// records moved within the log, when that frees a 1/compactGain of a
// segment. When no cleaning is worth it (the live records fill the
// segments nearly evenly) the LFU evicts, a little more each round
// (forceEvict), until one is.
// The LFU that evicts is the one of the tenant the room is for (key's):
// a tenant's writes make room by evicting its own keys (T35).
func (c *Cache) makeRoom(w memTier, n int, key []byte) bool { return c.room(w, n, true, c.ten.of(key)) }

// tryRoom is makeRoom for a reader (a promotion): it never waits, for
// another cleaning or for the device, and gives up after readerRounds
// rounds; the promotion is then skipped.
func (c *Cache) tryRoom(w memTier, n int, tenant uint8) bool { return c.room(w, n, false, tenant) }

// readerRounds bounds a reader's cleaning (tryRoom).
const readerRounds = 4

func (c *Cache) room(w memTier, n int, wait bool, tenant uint8) bool {
	m := c.mem
	l := m.logs[w]
	if l == nil {
		return false
	}
	step := 0
	m.mu.Lock()
	ok := l.CanAlloc(n, writerKeep)
	m.mu.Unlock()
	if ok {
		return true
	}
	rounds := memRounds
	if wait {
		m.cleaning[w].Lock() // one cleaning of w at a time; the others wait for its room
	} else if rounds = readerRounds; !m.cleaning[w].TryLock() {
		return false
	}
	defer m.cleaning[w].Unlock()
	for round := 0; round < rounds; round++ {
		m.mu.Lock()
		if l.CanAlloc(n, writerKeep) {
			m.mu.Unlock()
			return true
		}
		if w == memHot && m.logs[memWarm] != nil {
			seg := l.Oldest()
			if seg < 0 {
				withheld := l.Withheld() > 0
				m.mu.Unlock()
				if wait && withheld && c.yieldLive() {
					continue
				}
				return false
			}
			if live := l.SegmentLive(seg); !m.canTake(memWarm, live) {
				// Warm is full: hot keeps what it holds and compacts (it holds
				// the young records, and the LFU's rejections leave it most of
				// the dead space), else warm compacts, else the LFU evicts.
				m.mu.Unlock()
				if !c.compact(memHot, n, tenant) && !c.compactLocking(memWarm, wait, tenant) {
					c.forceEvict(memWarm, &step, wait, tenant)
				}
				continue
			}
			owners := m.beginClean(w, seg)
			m.mu.Unlock()
			c.cleanSegment(w, seg, owners, true, tenant)
			continue
		}
		m.mu.Unlock()
		if !c.compact(w, n, tenant) {
			c.forceEvict(w, &step, wait, tenant)
		}
	}
	if !wait {
		return false
	}
	// Still no room (a log of few segments, nearly all live): free the
	// sparsest segment whole, evicting what it holds.
	c.evictSegment(w, tenant)
	m.mu.Lock()
	ok = l.CanAlloc(n, writerKeep)
	m.mu.Unlock()
	return ok
}

// evictSegment frees log w's sparsest segment by evicting the keys whose
// records it holds (to cold, or lost without a cold tier), the last resort
// of makeRoom for tenant's room (w's cleaning lock held). While DRAM
// records are on their way to cold (flusherLagLocked) it evicts tenant's
// records only (T61).
func (c *Cache) evictSegment(w memTier, tenant uint8) {
	m := c.mem
	m.mu.Lock()
	seg, _ := m.logs[w].Sparsest()
	if seg < 0 {
		m.mu.Unlock()
		return
	}
	owners := m.beginClean(w, seg)
	lag := m.flusherLagLocked()
	m.mu.Unlock()
	defer clear(owners)
	for _, e := range owners {
		sh := c.dir.shard(e.node.Hash())
		sh.mu.Lock()
		if e.loc != 0 && e.where == w && e.loc.Segment() == seg && !e.flushing && e.state == stateLive && (!lag || e.tenant == tenant) {
			m.mu.Lock()
			m.dropLocked(e, w)
			m.mu.Unlock()
			c.evictLocked(sh, e)
		}
		sh.mu.Unlock()
	}
	m.mu.Lock()
	m.logs[w].EndClean(seg)
	m.mu.Unlock()
}

// compactLocking is compact(w, 0, tenant) under w's cleaning lock (a
// cleaning of hot compacting warm); without wait it gives up if the lock
// is taken.
func (c *Cache) compactLocking(w memTier, wait bool, tenant uint8) bool {
	if wait {
		c.mem.cleaning[w].Lock()
	} else if !c.mem.cleaning[w].TryLock() {
		return false
	}
	defer c.mem.cleaning[w].Unlock()
	return c.compact(w, 0, tenant)
}

// compactGain: a compaction moves a segment's records only if that frees
// at least 1/compactGain of a segment; below that the LFU makes room. A
// compaction copies up to compactGain-1 bytes for each it frees
// (docs/BENCHMARKS.md weighs that copying against the hit ratio).
const compactGain = 16

// compact runs one round of log w's compaction, no lock held: its
// sparsest segment's records move within the log, if that frees a
// 1/compactGain of a segment and at least need bytes, for tenant's room
// (moveOut). It reports whether it ran.
func (c *Cache) compact(w memTier, need int, tenant uint8) bool {
	m := c.mem
	l := m.logs[w]
	m.mu.Lock()
	seg, live := l.Sparsest()
	if seg < 0 || int64(l.SegmentBytes())-live < max(int64(l.SegmentBytes())/compactGain, int64(need)) {
		m.mu.Unlock()
		return false
	}
	owners := m.beginClean(w, seg)
	m.mu.Unlock()
	c.cleanSegment(w, seg, owners, false, tenant)
	return true
}

// pinBudget is how much of log w records being written to cold may hold
// before a writer that needs room waits for their writes.
func (c *Cache) pinBudget(w memTier) int64 {
	return min(c.flushHigh, c.mem.logs[w].Capacity()/8)
}

// forceEvict has tenant's LFU evict 2^step/compactGain of one of log w's
// segments below its weight (or its capacity, if lower), and releases
// the victims, so that some segment gains enough dead space to be worth
// cleaning; *step grows each call, up to the LFU's whole capacity. A
// tenant that keeps nothing in DRAM has nothing of its own to give: then
// every tenant's LFU evicts its capacity's share of it (T35). A reader
// (wait false) never waits. While records being flushed hold more than
// pinBudget of w, a writer waits for one of their writes instead: below
// that, writers go on while the flusher batches what they evicted.
func (c *Cache) forceEvict(w memTier, step *int, wait bool, tenant uint8) {
	m := c.mem
	m.mu.Lock()
	if m.pinned[w] > c.pinBudget(w) {
		// Records being written to cold hold room that their writes free:
		// wait for one rather than evict more (a reader does neither).
		m.mu.Unlock()
		if wait {
			c.waitForFlusher()
		}
		return
	}
	want := int64(m.logs[w].SegmentBytes()) << *step / compactGain
	*step = min(*step+1, 40)
	if l := m.lfus[tenant]; l.Weight() > 0 {
		m.forceLocked(l, want)
	} else {
		total := m.capacity()
		for _, l := range m.lfus {
			m.forceLocked(l, int64(float64(want)*float64(l.Capacity())/float64(total)))
		}
	}
	m.forced++
	m.mu.Unlock()
	if c.processVictims() == 0 && wait {
		c.waitForFlusher()
	}
}

// forceLocked has l evict want bytes below its weight, at most its whole
// capacity (mem.mu held). The LFU's weight may sit below its capacity
// (the log's room is lost to segment tails the LFU does not see): the
// reserve counts from the weight, so that every round evicts.
func (m *mem) forceLocked(l *policy.LFU, want int64) {
	slack := max(l.Capacity()-l.Weight(), 0)
	l.Evict(min(slack+want, l.Capacity()), m.evictFn)
}

// cleanSegment moves the records of segment seg of log w (whose cleaning
// began with owners), a cleaning for tenant's room, and ends the
// cleaning.
func (c *Cache) cleanSegment(w memTier, seg int, owners []*entry, demote bool, tenant uint8) {
	var rescued int64
	for _, e := range owners {
		c.moveOut(e, w, seg, demote, &rescued, tenant)
	}
	clear(owners) // they are m.owners[w]: keep no entry alive
	c.mem.mu.Lock()
	c.mem.logs[w].EndClean(seg)
	c.mem.mu.Unlock()
	c.processVictims()
}

// canTake reports whether log w could take live bytes of records moved in
// as a writer (keeping writerKeep segments free), mem.mu held.
func (m *mem) canTake(w memTier, live int64) bool {
	l := m.logs[w]
	return l != nil && l.Room()-int64(writerKeep)*int64(l.SegmentBytes()) >= live
}

// moveOut moves e's record out of segment seg of log from, if it still
// has one there (no lock held). Demoting hot, it goes to warm, or stays in
// hot (in its open segment) when it was read since it was placed, up to
// half a segment a cleaning, or when warm has no room after all;
// otherwise it moves within its log. A record no log has room for is
// evicted (evictLocked), unless it is another tenant's than the one the
// cleaning makes room for while DRAM records are on their way to cold
// (T61): it stays, as a record being flushed does.
func (c *Cache) moveOut(e *entry, from memTier, seg int, demote bool, rescued *int64, tenant uint8) {
	m := c.mem
	sh := c.dir.shard(e.node.Hash())
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e.loc == 0 || e.where != from || e.loc.Segment() != seg || e.flushing || e.state != stateLive {
		return
	}
	if c.stale(e) { // flushed (T14): its record goes instead of moving
		c.releaseLocked(e)
		c.memRemove(e)
		return
	}
	n := int(e.recSize)
	targets := [2]memTier{from, memNone}
	if demote {
		targets = [2]memTier{memWarm, memHot}
		if e.marked(markTouched) && *rescued+int64(n) <= int64(m.logs[memHot].SegmentBytes()/2) {
			targets = [2]memTier{memHot, memWarm}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, to := range targets {
		if to == memNone || m.logs[to] == nil || n > m.logs[to].SegmentBytes() {
			continue
		}
		keep := 0 // a log's cleaning may take the segments it keeps free
		if to != from {
			keep = writerKeep // a demotion writes into warm as a writer does
		}
		loc, b, ok := m.allocLocked(to, n, e, keep)
		if !ok {
			continue
		}
		copy(b, m.logs[from].Bytes(e.loc, n))
		m.freeLocked(from, e.loc, n)
		e.loc, e.where = loc, to
		e.unmark(markTouched)
		switch {
		case from != to:
			m.moved++
			m.noteDemotedLocked(e)
			c.st.demotions.Add(1)
		case demote:
			m.rescued++
			*rescued += int64(n)
		default:
			m.compact++
		}
		return
	}
	if e.tenant != tenant && m.flusherLagLocked() {
		// Room comes back as those writes complete: the tenant that needs
		// it waits for them (awaitRoom) or writes straight to cold, and
		// takes nothing of a tenant within its quota (T61).
		return
	}
	// No room anywhere: the key leaves DRAM.
	m.dropLocked(e, from)
	m.mu.Unlock()
	c.evictLocked(sh, e)
	m.mu.Lock() // for the deferred unlock
}

// promote moves e's warm record (version ver, n bytes) up to hot, no
// lock held (a warm hit the promotion policy deems frequent, T22).
func (c *Cache) promote(e *entry, sh *shard, ver uint64, n int) {
	if n > c.o.HotMaxValue || !c.tryRoom(memHot, n, e.tenant) {
		return
	}
	m := c.mem
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e.loc == 0 || e.where != memWarm || e.flushing || e.state != stateLive || e.ver != ver || int(e.recSize) != n {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	loc, b, ok := m.allocLocked(memHot, n, e, writerKeep)
	if !ok {
		return
	}
	copy(b, m.logs[memWarm].Bytes(e.loc, n))
	m.freeLocked(memWarm, e.loc, n)
	e.loc, e.where = loc, memHot
	e.unmark(markTouched)
	c.st.promotions.Add(1)
}

// admitFromCold gives a key read from cold at version ver a DRAM record
// (value v) if the promotion policy wants it and the key is still at that
// version without one (no lock held).
func (c *Cache) admitFromCold(key, v []byte, lo, ver uint64) {
	if c.pro.Promote(lo, len(v), policy.Cold) == policy.None {
		return
	}
	w := c.placeFor(len(v))
	if w == memNone || !c.tryRoom(w, len(v), c.ten.of(key)) {
		return
	}
	sh := c.dir.shard(lo)
	sh.mu.Lock()
	e := sh.m[viewString(key)]
	if e == nil || e.state != stateLive || e.ver != ver || e.loc != 0 || sh.pendingLocked(key) {
		sh.mu.Unlock()
		return
	}
	if c.placeOrDropLocked(e, v) {
		c.st.promotions.Add(1)
	}
	sh.mu.Unlock()
	c.processVictims()
}
