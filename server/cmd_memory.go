package server

import (
	"runtime/debug"
	"strings"
)

// cmdMemory: MEMORY USAGE key [SAMPLES count] → the bytes of DRAM key
// holds (tier.Cache.MemoryUsage: its directory entry, its value's record
// in a DRAM log or its live structure's heap, its cold index entry), nil
// when absent; MEMORY PURGE → OK, the Go runtime returning the free heap
// to the kernel (debug.FreeOSMemory, as Redis asks its allocator to
// purge); MEMORY MALLOC-STATS → Redis's answer without jemalloc: there is
// no malloc to report on (INFO memory has tiercache's figures); MEMORY
// HELP. Arguments and errors are Redis 7.0's (object.c memoryCommand),
// checked before the key is looked up; SAMPLES is read and not needed:
// nothing is sampled. DOCTOR and STATS, which report on Redis's
// allocator, are unknown subcommands here.
func (c *conn) cmdMemory(args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub != "help" && sub != "usage" && sub != "purge" && sub != "malloc-stats":
		c.unknownSubcommand("memory", args[1])
		return
	case sub == "usage" && len(args) < 3 || sub != "usage" && len(args) != 2:
		c.wrongArgs("memory|" + sub)
		return
	}
	switch sub {
	case "help":
		c.w.Array(len(memoryHelp))
		for _, l := range memoryHelp {
			c.w.Simple(l)
		}
	case "purge":
		debug.FreeOSMemory()
		c.w.OK()
	case "malloc-stats":
		c.w.Verbatim("txt", "Stats not supported for the current allocator")
	case "usage":
		for j := 3; j < len(args); j += 2 {
			if word(args[j]) != "SAMPLES" || j+1 >= len(args) {
				c.w.Error(errSyntax)
				return
			}
			n, ok := c.intArg(args[j+1])
			if !ok {
				return
			}
			if n < 0 {
				c.w.Error(errSyntax)
				return
			}
		}
		if n, ok := c.s.cache.MemoryUsage(args[2]); ok {
			c.w.Int(n)
		} else {
			c.w.Null()
		}
	}
}

// memoryHelp is MEMORY HELP's answer: Redis 7.0's lines for the
// subcommands tiercache has, USAGE's saying what it counts.
var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value: the DRAM it holds (its",
	"    directory entry, its value in DRAM, its cold index entry). <count> is",
	"    checked and not needed: nothing is sampled.",
	"HELP",
	"    Prints this help.",
}
