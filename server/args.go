package server

import (
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/tiercache/tiercache/resp"
)

// The grammar of command arguments. Numbers are read as redis-server
// reads them (resp R7, TestNumbersMatchRedis).

// parseInt reads an integer argument as redis-server does (string2ll).
func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// parseFloat reads a float argument as redis-server does (string2ld: a
// long double).
func parseFloat(b []byte) (*big.Float, bool) { return resp.ParseFloat(b) }

// int32Arg reads an argument redis-server reads as a C int
// (getIntFromObjectOrReply: SELECT's and COPY's database), answering its
// error itself when ok is false.
func (c *conn) int32Arg(b []byte) (n int64, ok bool) {
	n, ok = parseInt(b)
	switch {
	case !ok:
		c.w.Error(errNotInt)
	case n < math.MinInt32 || n > math.MaxInt32:
		c.w.Error("ERR value is out of range, value must between " + strconv.Itoa(math.MinInt32) + " and " + strconv.Itoa(math.MaxInt32))
		ok = false
	}
	return n, ok
}

// parseTimeout reads a blocking command's timeout in seconds (a float; 0
// waits forever) as redis-server 7.0 does (getTimeoutFromObjectOrReply):
// a long double, whose milliseconds are rounded up and read as a long
// long (a value past its range reads as negative, as x86 converts it).
func parseTimeout(b []byte) (time.Duration, string) {
	f, ok := parseFloat(b)
	if !ok {
		return 0, "ERR timeout is not a float or out of range"
	}
	ms := int64(math.MinInt64)
	if !f.IsInf() {
		x := new(big.Float).SetPrec(resp.LongDoublePrec).Mul(f, big.NewFloat(1000))
		if i, acc := x.Int(nil); i.IsInt64() {
			ms = i.Int64()
			if acc == big.Below { // Int truncates towards zero: ceil is one more for a positive fraction
				ms++
			}
		}
	}
	if ms < 0 {
		return 0, "ERR timeout is negative"
	}
	if ms > math.MaxInt64-time.Now().UnixMilli() {
		return 0, "ERR timeout is out of range"
	}
	return msDuration(ms), ""
}
