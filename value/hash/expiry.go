package hash

// Field expiry (Redis 7.4's HEXPIRE family): a field's expiry is unix
// milliseconds, 0 for none, kept in records of the second version
// (VersionTTL). A field whose expiry is at or before now is expired: no
// reader sees it (Live), and a write drops it (Purge) before it changes
// the hash.

// MaxExpiry is the latest expiry a command may set: Redis 7.4's
// HFE_MAX_ABS_TIME_MSEC (t_hash.c: EB_EXPIRE_TIME_MAX, 2^48 - 1, shifted
// right by 2), about the year 4199.
const MaxExpiry = 1<<46 - 1

// Expired reports whether a field of expiry exp is expired at now.
func Expired(exp, now int64) bool { return exp != 0 && exp <= now }

// Live is rec without its expired fields, appended to dst (not
// overlapping rec), or rec itself when none is expired (and always for a
// record of the first version). With keepTTL the copy keeps the other
// fields' expiries (the second version while one has any); without, it
// is of the first version, what the read commands take. minExp is the
// earliest expiry left (0: none), expired how many fields were dropped.
func Live(dst, rec []byte, now int64, keepTTL bool) (out []byte, minExp int64, expired int, err error) {
	if !HasTTL(rec) {
		_, err = Check(rec)
		return rec, 0, 0, err
	}
	n, _, err := Count(rec)
	if err != nil {
		return rec, 0, 0, err
	}
	anyLeft := false
	err = EachTTL(rec, func(_, _ []byte, exp int64) bool {
		switch {
		case Expired(exp, now):
			expired++
		case exp != 0:
			anyLeft = true
			if minExp == 0 || exp < minExp {
				minExp = exp
			}
		}
		return true
	})
	if err != nil {
		return rec, 0, 0, err
	}
	if expired == 0 && (keepTTL || !anyLeft) {
		return rec, minExp, 0, nil
	}
	ttl := keepTTL && anyLeft
	out = appendHeaderV(dst, n-expired, ttl)
	_ = EachTTL(rec, func(f, v []byte, exp int64) bool {
		if Expired(exp, now) {
			return true
		}
		out = appendChunk(out, f)
		out = appendChunk(out, v)
		if ttl {
			out = appendUvarint(out, uint64(exp))
		}
		return true
	})
	return out, minExp, expired, nil
}

// Purge drops the expired fields (in place) and says how many there were.
func Purge(fields []Field, now int64) ([]Field, int) {
	n := len(fields)
	out := fields[:0]
	for _, f := range fields {
		if !Expired(f.Expiry, now) {
			out = append(out, f)
		}
	}
	clear(fields[len(out):n])
	return out, n - len(out)
}

// MinExpiry is the earliest expiry of fields, 0 when none has one.
func MinExpiry(fields []Field) int64 {
	var m int64
	for _, f := range fields {
		if f.Expiry != 0 && (m == 0 || f.Expiry < m) {
			m = f.Expiry
		}
	}
	return m
}

// Cond is the condition of HEXPIRE's NX, XX, GT and LT.
type Cond uint8

// The conditions (at most one is given).
const (
	CondNone Cond = iota
	CondNX        // only a field without an expiry
	CondXX        // only a field with one
	CondGT        // only a later one than the field's (none counts as infinite)
	CondLT        // only an earlier one (none counts as infinite)
)

// The per-field codes of the HEXPIRE family and HPERSIST.
const (
	CodeNoField = -2 // no such field (or it is expired)
	CodeNoTTL   = -1 // HPERSIST, HTTL: the field has no expiry
	CodeNotMet  = 0  // the condition was not met
	CodeSet     = 1  // the expiry was set (HPERSIST: removed)
	CodeDeleted = 2  // the time is not after now: the field was deleted
)

// SetExpiry sets the expiry at of the fields named (in order; a name may
// come twice) on fields, which hold no expired field, as Redis 7.4's
// hexpireGenericCommand does: the condition is checked first, then a time
// at or before now deletes the field. It appends each name's code to codes
// and returns the fields left.
func SetExpiry(fields []Field, names [][]byte, at int64, cond Cond, now int64, codes []int64) ([]Field, []int64) {
	find := finder(fields, names)
	for _, name := range names {
		j := find(fields, name)
		if j < 0 {
			codes = append(codes, CodeNoField)
			continue
		}
		prev := fields[j].Expiry
		if !condMet(prev, at, cond) {
			codes = append(codes, CodeNotMet)
			continue
		}
		if at <= now {
			fields[j].Expiry = deleted // dropped below
			codes = append(codes, CodeDeleted)
			continue
		}
		fields[j].Expiry = at
		codes = append(codes, CodeSet)
	}
	return dropDeleted(fields), codes
}

// deleted marks a field SetExpiry deleted until dropDeleted drops it.
const deleted = -1

// dropDeleted removes the fields marked deleted (in place).
func dropDeleted(fields []Field) []Field {
	n := len(fields)
	out := fields[:0]
	for _, f := range fields {
		if f.Expiry != deleted {
			out = append(out, f)
		}
	}
	clear(fields[len(out):n])
	return out
}

// finder is Find, or for many names over a large hash a lookup through a
// map built once; a field marked deleted is not found.
func finder(fields []Field, names [][]byte) func([]Field, []byte) int {
	if len(names) <= 8 || len(fields) <= 16 {
		return Find
	}
	idx := make(map[string]int, len(fields))
	for i, f := range fields {
		idx[string(f.Name)] = i
	}
	return func(fields []Field, name []byte) int {
		if i, ok := idx[string(name)]; ok && fields[i].Expiry != deleted {
			return i
		}
		return -1
	}
}

// condMet is Redis 7.4's check (hashTypeSetExpiryListpack): a field with
// no expiry fails XX and GT and passes LT; one with an expiry fails NX,
// GT when it is not earlier than at, LT when it is not later.
func condMet(prev, at int64, cond Cond) bool {
	if prev == 0 {
		return cond != CondXX && cond != CondGT
	}
	switch cond {
	case CondNX:
		return false
	case CondGT:
		return prev < at
	case CondLT:
		return prev > at
	}
	return true
}

// Persist removes the expiry of the fields named, appending each one's
// code (CodeNoField, CodeNoTTL or CodeSet) to codes.
func Persist(fields []Field, names [][]byte, codes []int64) []int64 {
	find := finder(fields, names)
	for _, name := range names {
		j := find(fields, name)
		switch {
		case j < 0:
			codes = append(codes, CodeNoField)
		case fields[j].Expiry == 0:
			codes = append(codes, CodeNoTTL)
		default:
			fields[j].Expiry = 0
			codes = append(codes, CodeSet)
		}
	}
	return codes
}
