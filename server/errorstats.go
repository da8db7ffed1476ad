package server

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// errorPrefixes are the error codes the server replies with, as INFO
// errorstats counts them (errorstat_<code>:count=n); a reply starting
// with another code counts as the last one, OTHER.
var errorPrefixes = [...]string{"ERR", "WRONGTYPE", "EXECABORT", "NOAUTH", "WRONGPASS", "NOPROTO", "CROSSSLOT", "UNBLOCKED", "INVALIDOBJ", "TESTFAILED", "OTHER"}

// errorOrder is errorPrefixes' indexes in the codes' byte order: Redis
// lists its errorstats so (a radix tree's walk).
var errorOrder = func() []int {
	order := make([]int, len(errorPrefixes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(errorPrefixes[a], errorPrefixes[b]) })
	return order
}()

// errorCounts counts error replies by code, for every connection; total
// counts them all (INFO's total_error_replies) and, cumulative for
// /metrics, is not zeroed by reset (INFO subtracts a baseline instead).
type errorCounts struct {
	n     [len(errorPrefixes)]atomic.Uint64
	total atomic.Uint64
}

// count counts one error reply msg (its code is up to the first space).
func (e *errorCounts) count(msg string) {
	code, _, _ := strings.Cut(msg, " ")
	i := 0
	for i < len(errorPrefixes)-1 && errorPrefixes[i] != code {
		i++
	}
	e.n[i].Add(1)
	e.total.Add(1)
}

// writeInfo writes INFO errorstats' lines: the codes replied at least once.
func (e *errorCounts) writeInfo(b *strings.Builder) {
	for _, i := range errorOrder {
		p := errorPrefixes[i]
		if n := e.n[i].Load(); n > 0 {
			b.WriteString("errorstat_" + p + ":count=")
			b.WriteString(strconv.FormatUint(n, 10))
			b.WriteString("\r\n")
		}
	}
}
