package server

import (
	"strings"

	"github.com/tiercache/tiercache/tier"
)

// objectEncoding is OBJECT ENCODING's answer for a kind. A string is
// stored as the bytes it was given, never as a number nor inline with its
// header, so "raw" (Redis's "int" and "embstr" would not be true); an
// aggregate is one packed record of its items in order, read by a linear
// walk, which is what Redis's "listpack" is, in tiercache's own format
// (hash.go), whatever its size.
func objectEncoding(k tier.Kind) string {
	if k == kindString {
		return "raw"
	}
	return "listpack"
}

// cmdObject: OBJECT ENCODING|FREQ|REFCOUNT|IDLETIME key, OBJECT HELP.
func (c *conn) cmdObject(args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	if sub == "help" {
		if len(args) != 2 {
			c.wrongArgs("object|help")
			return
		}
		c.w.Array(len(objectHelp))
		for _, l := range objectHelp {
			c.w.Simple(l)
		}
		return
	}
	switch sub {
	case "encoding", "freq", "refcount", "idletime":
	default:
		c.unknownSubcommand("object", args[1])
		return
	}
	if len(args) != 3 {
		c.wrongArgs("object|" + sub)
		return
	}
	kind, ok := c.s.cache.KindOf(args[2])
	if !ok {
		c.w.Null()
		return
	}
	switch sub {
	case "encoding":
		c.w.BulkString(objectEncoding(kind))
	case "refcount":
		c.w.Int(1)
	case "freq":
		// The cache's estimate of the key's recent reads
		// (tier.Cache.Frequency: DRAM's LFU and the promotion policy's),
		// 0 to 16, where Redis's LFU counter is logarithmic, 0 to 255.
		f, ok := c.s.cache.Frequency(args[2])
		if !ok {
			c.w.Null()
			return
		}
		c.w.Int(int64(f))
	case "idletime":
		// Redis answers this when maxmemory-policy is LFU: tiercache's
		// policy counts reads, it keeps no access times.
		c.w.Error(errIdleTimeNotLRU)
	}
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency estimate of the <key>: the cache's count of its",
	"    recent reads (its DRAM LFU's and its promotion policy's), 0 to 16.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}
