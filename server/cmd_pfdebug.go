package server

import (
	"fmt"

	"github.com/tiercache/tiercache/value/hll"
)

// PFDEBUG and PFSELFTEST (Redis 7.0, hyperloglog.c: pfdebugCommand,
// pfselftestCommand).

// cmdPFDebug: PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. The key is
// looked up and checked before the subcommand. GETREG and TODENSE turn a
// sparse HyperLogLog dense and store it, as Redis does, without telling
// anyone: no WATCH, no event, no invalidation (Redis only counts it
// dirty).
func (c *conn) cmdPFDebug(args [][]byte) {
	sub := word(args[1])
	var regs []uint8
	var text string
	var converted bool
	err := c.stringUpdate(args[2], func(v []byte, exists bool) ([]byte, bool, error) {
		converted = false
		if !exists {
			return nil, false, replyError(errPFDebugNoKey)
		}
		v = hllInput(v, true)
		if err := hll.Check(v); err != nil {
			return nil, false, fmt.Errorf("pfdebug: %w", err)
		}
		switch sub {
		case "GETREG", "TODENSE":
			d, err := hll.ToDense(v)
			if err != nil {
				return nil, false, fmt.Errorf("pfdebug: %w", err)
			}
			converted = !hll.IsDense(v)
			if sub == "GETREG" {
				regs = hll.DenseRegisters(regs[:0], d)
			}
			return d, converted, nil
		case "DECODE":
			if hll.IsDense(v) {
				return nil, false, replyError(errHLLNotSparse)
			}
			text = hll.Decode(v)
		case "ENCODING":
			text = "sparse"
			if hll.IsDense(v) {
				text = "dense"
			}
		default:
			return nil, false, replyError(errPFDebugUnknown(string(args[1])))
		}
		return nil, false, nil
	})
	c.noop = true
	if err != nil {
		c.cacheError(err)
		return
	}
	switch sub {
	case "GETREG":
		c.w.Array(len(regs))
		for _, r := range regs {
			c.w.Int(int64(r))
		}
	case "TODENSE":
		c.w.Int(int64(boolInt(converted)))
	case "DECODE":
		c.w.BulkString(text)
	default:
		c.w.Simple(text)
	}
}

// cmdPFSelfTest: PFSELFTEST → OK when value/hll's registers and
// estimator pass their check (hll.SelfTest, a lighter run of Redis's).
func (c *conn) cmdPFSelfTest(_ [][]byte) {
	if !hll.SelfTest(uint64(c.now())) {
		c.w.Error(errHLLSelfTest)
		return
	}
	c.w.OK()
}
