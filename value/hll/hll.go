package hll

// The operations of PFADD, PFCOUNT and PFMERGE on HyperLogLog strings,
// as Redis 7.0's hyperloglog.c does them. Each takes the stored string
// and never changes it: what it changes is a copy it returns.

// Add adds elems to the HyperLogLog v (nil: none yet, one is created
// as New) and returns the string to store and whether anything changed
// (PFADD's 1 or 0: the key was created or a register rose); a change
// invalidates the cached cardinality. sparseMax is hll-sparse-max-bytes.
// It answers ErrNotHLL for a string that is not a HyperLogLog and
// ErrCorrupt for a sparse one whose opcodes do not cover an element's
// register.
func Add(v []byte, elems [][]byte, sparseMax int) ([]byte, bool, error) {
	changed := false
	if v == nil {
		v, changed = New(), true
	} else {
		if err := Check(v); err != nil {
			return nil, false, err
		}
		v = append(make([]byte, 0, len(v)+8), v...) // a zero terminator past it
	}
	for _, e := range elems {
		var rose bool
		var err error
		if v, rose, err = addOne(v, e, sparseMax); err != nil {
			return nil, false, err
		}
		changed = changed || rose
	}
	if changed {
		invalidate(v)
	}
	return v, changed, nil
}

// addOne adds one element to v in place (or to the dense string it
// turns into), reporting whether its register rose.
func addOne(v, elem []byte, sparseMax int) ([]byte, bool, error) {
	index, count := patLen(elem)
	if IsDense(v) {
		return v, denseRaise(v[HeaderSize:], index, count), nil
	}
	return sparseRaise(v, index, count, sparseMax)
}

// Count is PFCOUNT of one key: the cached cardinality of the
// HyperLogLog v when valid (fresh nil), else the one computed from its
// registers and fresh, a copy of v caching it, for the caller to store.
// ErrNotHLL or ErrCorrupt as Add.
func Count(v []byte) (card uint64, fresh []byte, err error) {
	v = clip(v)
	if err := Check(v); err != nil {
		return 0, nil, err
	}
	if c, ok := Cached(v); ok {
		return c, nil, nil
	}
	var hist [64]int
	if IsDense(v) {
		denseHisto(v[HeaderSize:], &hist)
	} else if !sparseHisto(v[HeaderSize:], &hist) {
		return 0, nil, ErrCorrupt
	}
	card = estimate(&hist)
	fresh = append([]byte(nil), v...)
	setCached(fresh, card)
	return card, fresh, nil
}

// Registers are the 16384 registers one byte each: the union PFCOUNT of
// several keys and PFMERGE build (Redis's max array).
type Registers struct {
	r [numRegisters]uint8
	// dense: some HyperLogLog merged in was dense (PFMERGE then makes its
	// destination dense).
	dense bool
}

// Merge raises each register to v's where v's is larger (hllMerge).
// ErrNotHLL or ErrCorrupt as Add; on an error r may be half merged.
func (r *Registers) Merge(v []byte) error {
	v = clip(v)
	if err := Check(v); err != nil {
		return err
	}
	if IsDense(v) {
		r.dense = true
		regs := v[HeaderSize:]
		for i, j := 0, 0; i+3 <= len(regs); i, j = i+3, j+4 {
			r0, r1, r2, r3 := denseFour(regs[i : i+3])
			m := r.r[j : j+4 : j+4]
			m[0], m[1], m[2], m[3] = max(m[0], r0), max(m[1], r1), max(m[2], r2), max(m[3], r3)
		}
		return nil
	}
	ok := sparseWalk(v[HeaderSize:], func(first, n, val int) {
		for i := first; i < first+n; i++ {
			r.r[i] = max(r.r[i], uint8(val))
		}
	})
	if !ok {
		return ErrCorrupt
	}
	return nil
}

// Count is the cardinality of the merged registers.
func (r *Registers) Count() uint64 {
	var hist [64]int
	for _, x := range r.r {
		hist[x]++
	}
	return estimate(&hist)
}

// Store writes the merged registers into the HyperLogLog dst (nil: a
// new one), as PFMERGE does into its destination, which it merged
// first: dense if anything merged was, each non-zero register raised in
// order (a sparse one may turn dense as it grows), the cached
// cardinality invalidated. dst is not changed; the result is new.
func (r *Registers) Store(dst []byte, sparseMax int) ([]byte, error) {
	var v []byte
	if dst == nil {
		v = New()
	} else {
		if err := Check(dst); err != nil {
			return nil, err
		}
		v = append(make([]byte, 0, len(dst)+8), dst...) // a zero terminator past it
	}
	if r.dense && !IsDense(v) {
		d, err := toDense(v)
		if err != nil {
			return nil, err
		}
		v = d
	}
	for i, x := range r.r {
		if x == 0 {
			continue
		}
		if IsDense(v) {
			denseRaise(v[HeaderSize:], i, x)
			continue
		}
		if out, _, err := sparseRaise(v, i, x, sparseMax); err == nil {
			v = out // Redis ignores a failure here: the merged destination covers its registers
		}
	}
	invalidate(v)
	return v, nil
}
