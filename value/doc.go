// Package value is the root of the value encodings: one package per kind
// of aggregate value the server stores as one record (value/hash,
// value/list; sets and sorted sets will be value/set and value/zset).
// Each is plain code over bytes, with no server and no tier import: it
// defines a record's format and the operations of its commands as
// redis-server does them, and is tested on its own. The server gives each
// kind its tier.Kind, reads a record, calls the package and stores what it
// built in one tier.Cache.Update (docs/DESIGN.md, "Data types").
//
// Each package's invariants have its own prefix: VH for value/hash, VL
// for value/list.
package value
