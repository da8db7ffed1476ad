package tier

import "errors"

// Kind is what a value is to the layer above the cache: a string, or the
// encoding of an aggregate (a hash, a list). The cache never interprets a
// value; it stores the kind beside it — in the directory entry, and in the
// cold record's flags (so a key adopted from cold, T4/T15, keeps it) — and
// every version of a key has exactly one kind (T23).
type Kind uint8

// KindString is the kind of a value stored without one: a plain string.
// Get, View, MGet, MGetPrefix, GetDel, GetEx and SetGet read strings only
// (T23).
const KindString Kind = 0

// ErrWrongKind is returned by the string reads (Get, View, GetDel, GetEx,
// SetGet) for a key that holds another kind of value; nothing changed.
var ErrWrongKind = errors.New("tier: the key holds another kind of value")

// kindFlagsMask is the part of a cold record's flags (nvmekv.Meta.Flags,
// the record header's flags word) that holds the kind.
const kindFlagsMask = 0xff

// coldFlags is the cold record flags word for kind k.
func coldFlags(k Kind) uint32 { return uint32(k) }

// kindOfFlags is the kind a cold record's flags word carries.
func kindOfFlags(f uint32) Kind { return Kind(f & kindFlagsMask) }
