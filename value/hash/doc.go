// Package hash is the record a hash is stored as, and the operations of
// the hash commands on it. A record is a version byte, the field count as
// a uvarint, then for each field in insertion order its length, its bytes,
// its value's length and its value (lengths as uvarints). Insertion order
// is kept, as Redis's listpack keeps it; a field set again keeps its
// place. A hash with field expiries (Redis 7.4's HEXPIRE) is a record of
// the second version (VersionTTL): each field is followed by its expiry, a
// uvarint of unix milliseconds, 0 for none. A hash without one is always
// written in the first version, so records written before field expiry
// existed read unchanged and stay what they are.
//
// A field whose expiry is at or before now is expired: Live gives the
// record without such fields (what every read answers from), Purge drops
// them from decoded fields (what every write does first), SetExpiry and
// Persist are HEXPIRE's and HPERSIST's changes, with their per-field
// codes.
//
// A record is read without copying (Each, Get, Decode: the fields alias
// it) and changed either field by field in place of a decode (Put,
// Remove: a scan for the field and one copy of the bytes around it) or
// decoded into fields, changed (Set, Delete) and encoded again (Encode).
// ScanStep orders a large hash for HSCAN's cursor. Cut lays a large
// record out in pieces for the cold tier (pieces.go), each field with its
// expiry, so a read of one field reads only its piece.
//
// Hash is the hash as the DRAM tiers keep it live (tier.Live): its
// record, edited in place, while small (Redis's listpack bounds; from 16
// fields with an index of its fields' entries: a tag byte of each name's
// hash and the entry's offset), a
// value.Table once large, its field expiries in a side table (field →
// unix ms, only the fields that have one, the earliest kept); the record
// is built from it when asked for, of the second version exactly while a
// field has an expiry. It keeps expired fields until a write purges them
// (Purge); its live readers (GetLive, LenLive, EachLive, LiveFields) skip
// them.
//
// # Invariants
//
//   - VH1: Encode then Decode gives the same fields in the same order, and
//     Size is exactly the encoded length (TestEncodeDecode).
//   - VH2: a record that does not decode (cut short, a trailing byte, a
//     length past its end, an unknown version) is refused with ErrCorrupt
//     by every function that reads it, never a panic (TestCorruptRecords,
//     FuzzDecode).
//   - VH3: Put and Remove give byte for byte the record that Set or Delete
//     on the decoded fields, encoded, gives; a field set again keeps its
//     place (TestEditsMatchDecode).
//   - VH4: Limits are checked from sizes before the new record is
//     allocated: a Put past MaxFields or MaxBytes answers a *LimitError
//     and leaves dst as it was (TestPutLimits).
//   - VH5: stepping a hash with ScanStep returns each field present for
//     the whole scan exactly once, whatever is added or removed between
//     steps, and about count fields a step (TestScanStepExactlyOnce).
//   - VH6: a hash without field expiries is written in the first version,
//     byte for byte as before field expiry existed; one with an expiry in
//     the second, which Decode reads back with every expiry; edits (Put,
//     PutKeepTTL, Remove) keep a record's version, Put clearing the
//     field's expiry and PutKeepTTL keeping it (TestRecordVersions,
//     TestEditsMatchDecode, TestCorruptRecords for both versions).
//   - VH7: Live gives exactly the fields not expired at now, in order,
//     with or without their expiries, the earliest expiry left and how
//     many it dropped, and the record itself when it drops nothing
//     (TestLive).
//   - VH8: SetExpiry, Persist, Set and Purge give the per-field codes and
//     the fields that a map of (value, expiry) gives under Redis 7.4's
//     rules: the condition first (a field without expiry fails XX and GT,
//     passes LT), then a time at or before now deletes (TestSetExpiryModel).
//   - VH9: a Hash behaves as a map under Put and Delete; while small its
//     record is byte for byte what Put and Remove on the record give (so
//     its order is Redis's), past SmallFields fields or a name or value
//     over SmallValue bytes it turns large keeping every field; its
//     record decodes to its fields, RecordSize is its length, SizeAfter
//     predicts a Put, and LoadHash reads it back (TestHashModel).
//   - VH10: HeapBytes is the heap a Hash takes, within 2% of what the
//     heap grows by, small and large (TestHashHeapBytes).
//   - VH11: a Hash with field expiries behaves as a map of (value,
//     expiry) under Put (which drops the expiry), PutKeepTTL, Delete,
//     SetExpiry and Purge, small and large: its record is of the second
//     version exactly while a field has an expiry, byte for byte Encode's
//     for its fields, RecordSize and SizeAfter are exact, LoadHash reads
//     either version back, and GetLive, LenLive, Expired and MinExpiry
//     agree with the model at any now (TestHashExpiryModel); CheckPuts
//     and PutLimited refuse exactly the pairs whose Puts would pass the
//     limits, PutLimited changing nothing then (TestCheckPuts,
//     TestPutLimited); Expire and PersistFields give SetExpiry's and
//     Persist's codes and fields (TestHashExpireMatchesFields).
//   - VH12: Cut lays a large record of either version out in pieces
//     whose concatenation decodes to its fields with their expiries; a
//     piece's meta counts its fields and says whether they carry
//     expiries and whether one has any; PieceEach reads a piece's fields
//     with their expiries, PiecesFor names the pieces that may hold a
//     field, Expiring those with an expiry (TestPiecesCut).
//   - VH13: a small Hash of indexFrom (16) fields or more keeps an index
//     of its fields (a tag byte of each name's hash and the entry's
//     offset) that names every field's entry after any sequence of Put
//     and Delete, and a lookup through it finds what a scan of the
//     record finds (TestSmallHashIndex).
//
// # Caveats
//
//   - Fields and values returned alias the record: valid while it is.
//   - Put and Remove write into dst, which must not overlap the record.
//   - Every read of one field of a record scans it: O(hash size) (a Hash
//     looks a field up in its index or table instead).
package hash
