package nvmekv

import "context"

// chunkSweep is where a put's leftover chunks may start (K13): per chunk
// set, the first index that neither the new record uses nor the put's
// cleanup deletes, and whether its chunk keys are short (K16: those of
// the record each set held or holds; a set neither used is swept at the
// length a put writes now).
type chunkSweep struct {
	h     [16]byte
	from  [2]uint32
	short [2]bool
}

// sweep deletes the chunks an earlier put left behind: one cut short by a
// crash after its header was written and before its cleanup ran leaves
// the replaced record's chunks, and a later put over them in the same set
// with fewer chunks would keep the rest for ever (in Strict mode they
// hold capacity; in Cache mode the log reclaims them in time). Leftovers
// of a set are contiguous from where the sweep starts, so it probes with
// Exist, index by index, until one is absent: two Exists for every
// chunked put (both sets, one batch), more only when there is something
// to delete. It is best effort: an error ends it.
func (kv *KV) sweep(ctx context.Context, sw []chunkSweep) {
	type probe struct {
		h     *[16]byte
		set   uint8
		short bool
		i     uint32
	}
	ps := make([]probe, 0, 2*len(sw))
	for k := range sw {
		ps = append(ps, probe{&sw[k].h, 0, sw[k].short[0], sw[k].from[0]}, probe{&sw[k].h, 1, sw[k].short[1], sw[k].from[1]})
	}
	for len(ps) > 0 {
		ops := make([]*Op, len(ps))
		for j, p := range ps {
			ops[j] = &Op{Code: OpExist, Key: chunkKeyOf(*p.h, p.set, p.short, p.i)}
		}
		if kv.doBatched(ctx, ops) != nil {
			return
		}
		var dels []*Op
		next := ps[:0]
		for j, p := range ps {
			if ops[j].Err == nil {
				dels = append(dels, &Op{Code: OpDelete, Key: ops[j].Key})
				p.i++
				next = append(next, p)
			}
		}
		if len(dels) > 0 {
			if kv.doBatched(ctx, dels) != nil {
				return
			}
			kv.swept.Add(uint64(len(dels)))
		}
		ps = next
	}
}
