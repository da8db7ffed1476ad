package server

import (
	"strconv"
	"strings"
	"sync/atomic"
)

// errorPrefixes are the error codes the server replies with, as INFO
// errorstats counts them (errorstat_<code>:count=n); a reply starting
// with another code counts as the last one, OTHER.
var errorPrefixes = [...]string{"ERR", "WRONGTYPE", "EXECABORT", "NOAUTH", "WRONGPASS", "NOPROTO", "CROSSSLOT", "OTHER"}

// errorCounts counts error replies by code, for every connection.
type errorCounts struct {
	n [len(errorPrefixes)]atomic.Uint64
}

// count counts one error reply msg (its code is up to the first space).
func (e *errorCounts) count(msg string) {
	code, _, _ := strings.Cut(msg, " ")
	i := 0
	for i < len(errorPrefixes)-1 && errorPrefixes[i] != code {
		i++
	}
	e.n[i].Add(1)
}

// writeInfo writes INFO errorstats' lines: the codes replied at least once.
func (e *errorCounts) writeInfo(b *strings.Builder) {
	for i, p := range errorPrefixes {
		if n := e.n[i].Load(); n > 0 {
			b.WriteString("errorstat_" + p + ":count=")
			b.WriteString(strconv.FormatUint(n, 10))
			b.WriteString("\r\n")
		}
	}
}
