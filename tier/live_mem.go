package tier

// The live structures' memory (docs/DESIGN.md §6, T45). A live structure
// is on the Go heap, held by hot: its heap bytes, measured (Live.HeapBytes),
// are its weight in the LFU, as a record's bytes are, and they are charged
// to hot's budget by segments the hot log withholds (dram A7), whose pages
// go back to the kernel. So hot's records and the live structures together
// stay within HotBytes. When the withheld segments cannot cover them (hot
// holds what cannot move, or the live structures would take more of hot
// than liveLimit), the structures not read or changed lately are demoted:
// serialized into warm records, or evicted to cold when warm has no room.

// liveLimit is the most of hot's arena the live structures may take: all
// of it but the segments a writer keeps free and one for records.
func (c *Cache) liveLimit() int64 {
	hot := c.mem.logs[memHot]
	return max(hot.Capacity()-int64(writerKeep+1)*int64(hot.SegmentBytes()), 0)
}

// liveBalance withholds hot segments until they cover the live
// structures' heap, and returns those no longer needed (beyond a margin of
// one segment), no lock held: a cleaning of hot makes room for a segment
// to withhold, and what cannot be covered is demoted. Writers of live
// structures call it before and after their change, so the heap they hold
// beyond what hot withholds is at most one command's growth. tenant is the
// writer's: a cleaning that must evict evicts its keys (T35).
func (c *Cache) liveBalance(tenant uint8) {
	hot := c.mem.logs[memHot]
	seg := int64(hot.SegmentBytes())
	if held, covered := c.liveHeld.Load(), c.liveCovered(); !c.liveUnbalanced(held, covered, seg) {
		return
	}
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	m := c.mem
	limit := c.liveLimit()
	for round := 0; round < memRounds; round++ {
		m.mu.Lock()
		held, covered := m.bytes[memLive], int64(hot.Withheld())*seg
		switch {
		case held > limit:
			m.mu.Unlock()
			c.demoteLive(held - limit + limit/8)
			continue
		case held > covered && hot.Withhold(writerKeep):
		case held > covered:
			m.mu.Unlock()
			if !c.room(memHot, int(seg), true, tenant) {
				c.demoteLive(held - covered)
			}
			continue
		case c.liveUnbalanced(held, covered, seg):
			hot.Return()
		default:
			m.mu.Unlock()
			return
		}
		c.liveWithheld.Store(int64(hot.Withheld()))
		m.mu.Unlock()
	}
}

// yieldLive gives hot a withheld segment back for records when the live
// structures took all of hot its records may not do without (the open
// segment full and no sealed one to clean: room finds nothing to move),
// demoting the structures not used lately by two segments' worth first
// so that what stays withheld still covers them. It reports whether a
// segment came back. A writer calls it with no lock held; it gives up at
// once while liveBalance runs (which makes room itself).
func (c *Cache) yieldLive() bool {
	if !c.liveMu.TryLock() {
		return false
	}
	defer c.liveMu.Unlock()
	m, hot := c.mem, c.mem.logs[memHot]
	seg := int64(hot.SegmentBytes())
	c.demoteLive(2 * seg)
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := int64(hot.Withheld()); w == 0 || m.bytes[memLive] > (w-1)*seg || !hot.Return() {
		return false
	}
	c.liveWithheld.Store(int64(hot.Withheld()))
	return true
}

// liveUnbalanced reports whether the live structures' held bytes want
// more withheld (covered) bytes, or fewer: held uncovered, or two
// segments more than held covered (one spare keeps a structure growing
// and shrinking across a boundary from withholding and returning a
// segment each time), or any covered once nothing is held.
func (c *Cache) liveUnbalanced(held, covered, seg int64) bool {
	return held > covered || covered-held >= 2*seg || held == 0 && covered > 0
}

// liveCovered is the bytes hot withholds for the live structures (read
// without mem.mu: a hint for liveBalance's quick check).
func (c *Cache) liveCovered() int64 {
	return c.liveWithheld.Load() * int64(c.mem.logs[memHot].SegmentBytes())
}

// demoteLive demotes live structures holding at least want bytes (liveMu
// held, no other lock): a clock over the shards' tables, which spares
// once a structure read or changed since it last passed (markTouched), and
// demotes the others (demoteLiveLocked), making room in warm for them
// when it has none.
func (c *Cache) demoteLive(want int64) {
	var done int64
	for n := 0; n < 2*shardCount && done < want; n++ {
		i := c.liveHand
		c.liveHand = (i + 1) % shardCount
		sh := &c.dir.shards[i]
		sh.mu.Lock()
		ls := &c.lt[i]
		for j := 0; j < len(ls.slots) && done < want; j++ {
			s := &ls.slots[j]
			if s.v == nil {
				continue
			}
			if s.e.unmark(markTouched) && n < shardCount {
				continue // read or changed lately: spared on the first lap
			}
			e, bytes := s.e, s.bytes
			if need := c.demoteLiveLocked(sh, e, false); need > 0 {
				// Warm has no room for its record: clean warm with no
				// lock held, then demote it if it is still there.
				sh.mu.Unlock()
				c.room(memWarm, need, true, e.tenant)
				sh.mu.Lock()
				if e.where != memLive || int(e.loc-1) != j {
					continue
				}
				c.demoteLiveLocked(sh, e, true)
			}
			done += bytes
		}
		sh.mu.Unlock()
		c.processVictims()
	}
}

// demoteLiveLocked turns e's live structure into a warm record of its
// serialized form (e's shard write lock held); it stays in the LFU,
// weighing its record. Without room in warm it returns the record's size
// and changes nothing, unless evict: then e leaves DRAM as an eviction by
// the LFU would (to cold, or lost without a cold tier).
func (c *Cache) demoteLiveLocked(sh *shard, e *entry, evict bool) (need int) {
	m := c.mem
	if e.state != stateLive || c.stale(e) {
		c.releaseLocked(e) // flushed (T14) or gone: nothing to keep
		c.memRemove(e)
		return 0
	}
	v := c.liveOf(e)
	n := v.RecordSize()
	w := m.logs[memWarm]
	if w != nil && n <= w.SegmentBytes() {
		m.mu.Lock()
		loc, b, ok := m.allocLocked(memWarm, n, e, writerKeep)
		m.mu.Unlock()
		if ok {
			if rec := v.AppendRecord(b[:0]); len(rec) != n || n > 0 && &rec[0] != &b[0] {
				panic("tier: a live structure's record is not RecordSize bytes")
			}
			c.dropLiveLocked(e)
			e.loc, e.where, e.recSize = loc, memWarm, uint32(n)
			m.mu.Lock()
			m.admitLocked(e, n)
			m.liveDemoted++
			m.mu.Unlock()
			c.st.demotions.Add(1)
			return 0
		}
		if !evict {
			return n
		}
	}
	m.mu.Lock()
	if e.node.Resident() {
		m.lfuOf(e).Remove(&e.node)
		m.evicted[memLive]++
		m.tenantEvicted[e.tenant]++
	}
	m.liveDemoted++
	m.mu.Unlock()
	c.evictLiveLocked(sh, e)
	return 0
}
