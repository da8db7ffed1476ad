package server

// BITFIELD and BITFIELD_RO (Redis 7.0, bitops.c: bitfieldGeneric). Every
// subcommand is parsed before anything is read or written, so a bad one
// anywhere changes nothing; the writes are then one Cache.Update.

// cmdBitField: BITFIELD key [GET type offset | SET type offset value |
// INCRBY type offset increment | OVERFLOW WRAP|SAT|FAIL ...] → an array
// with a reply per GET, SET and INCRBY; BITFIELD_RO (ro) takes GET only.
func (c *conn) cmdBitField(args [][]byte, ro bool) {
	ops, writes, ok := c.bitfieldArgs(args[2:])
	if !ok {
		return
	}
	c.noop = true // changed nothing unless a write changes a field (below)
	if !writes {
		v, _, ok := c.stringRead(args[1])
		if !ok {
			return
		}
		c.w.Array(len(ops))
		for i := range ops {
			c.w.Int(ops[i].get(v))
		}
		return
	}
	if ro {
		c.w.Error(errBitfieldRO) // after the arguments are read, as Redis
		return
	}
	var last int64 // the last bit a write reaches
	for _, op := range ops {
		if op.code != bitfieldGet {
			last = max(last, op.offset+int64(op.bits)-1)
		}
	}
	size := last>>3 + 1
	res := make([]bitfieldResult, len(ops))
	changes, created := 0, false
	err := c.stringUpdate(args[1], func(v []byte, exists bool) ([]byte, bool, error) {
		created = !exists
		if err := c.tooLong(size); err != nil {
			return nil, false, err
		}
		grown := size > int64(len(v)) // a key made or grown counts as changed (Redis's strGrowSize)
		out := c.grow(v, max(len(v), int(size)))
		changes = 0
		for i := range ops {
			if ops[i].code == bitfieldGet {
				res[i] = bitfieldResult{n: ops[i].get(out)}
				continue
			}
			var changed bool
			res[i], changed = ops[i].write(out)
			if !res[i].nil && (changed || grown) {
				changes++
			}
		}
		// Redis makes or grows the string even when every write failed,
		// silently (no event, no WATCH): stored, but a noop.
		return out, grown || changes > 0, nil
	})
	if err != nil {
		c.cacheError(err)
		return
	}
	c.noop = changes == 0
	if c.noop && created {
		c.s.publishEvent(notifyNew, "new", args[1]) // Redis's dbAdd, its only event then
	}
	c.w.Array(len(res))
	for _, r := range res {
		if r.nil {
			c.w.Null()
		} else {
			c.w.Int(r.n)
		}
	}
}

// bitfieldOverflows and bitfieldCodes are OVERFLOW's words and the
// subcommands that read or write a field, with the arguments they take.
var (
	bitfieldOverflows = map[string]bitfieldOverflow{"WRAP": overflowWrap, "SAT": overflowSat, "FAIL": overflowFail}
	bitfieldCodes     = map[string]struct {
		code bitfieldOpcode
		args int
	}{"GET": {bitfieldGet, 2}, "SET": {bitfieldSet, 3}, "INCRBY": {bitfieldIncr, 3}}
)

// bitfieldArgs parses BITFIELD's subcommands, answering the first error
// as Redis does (a subcommand short of arguments is a syntax error);
// writes says whether there is a SET or INCRBY.
func (c *conn) bitfieldArgs(args [][]byte) (ops []bitfieldOp, writes, ok bool) {
	overflow := overflowWrap
	for j := 0; j < len(args); j++ {
		name := word(args[j])
		if name == "OVERFLOW" && j+1 < len(args) {
			j++
			if overflow, ok = bitfieldOverflows[word(args[j])]; !ok {
				c.w.Error(errOverflowType)
				return nil, false, false
			}
			continue
		}
		sub, known := bitfieldCodes[name]
		if !known || len(args)-j-1 < sub.args {
			c.w.Error(errSyntax)
			return nil, false, false
		}
		op := bitfieldOp{code: sub.code, overflow: overflow}
		if op.signed, op.bits, ok = bitfieldType(args[j+1]); !ok {
			c.w.Error(errBitfieldType)
			return nil, false, false
		}
		if op.offset, ok = c.bitfieldOffset(args[j+2], op.bits); !ok {
			return nil, false, false
		}
		if op.code != bitfieldGet {
			writes = true
			if op.value, ok = c.intArg(args[j+3]); !ok {
				return nil, false, false
			}
		}
		j += sub.args
		ops = append(ops, op)
	}
	return ops, writes, true
}

// bitfieldType reads a type: i1..i64 or u1..u63 (Redis's
// getBitfieldTypeFromArgument; u64 would not fit its integer reply).
func bitfieldType(b []byte) (signed bool, bits int, ok bool) {
	if len(b) == 0 || b[0] != 'i' && b[0] != 'u' {
		return false, 0, false
	}
	n, ok := parseInt(b[1:])
	signed = b[0] == 'i'
	if !ok || n < 1 || n > 64 || !signed && n > 63 {
		return false, 0, false
	}
	return signed, int(n), true
}

// bitfieldOffset reads an offset in bits, or #n for n times the type's
// width (the product wraps as Redis's long long multiplication does),
// bounded as SETBIT's (bitOffsetArg).
func (c *conn) bitfieldOffset(b []byte, bits int) (int64, bool) {
	if len(b) == 0 || b[0] != '#' {
		return c.bitOffsetArg(b)
	}
	n, ok := parseInt(b[1:])
	return c.bitOffsetIn(n*int64(bits), ok)
}
