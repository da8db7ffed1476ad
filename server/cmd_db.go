package server

// tiercache has one database, number 0: it answers MOVE and SWAPDB as a
// redis-server started with `databases 1` does (db.c moveCommand,
// swapdbCommand, Redis 7.0), so MOVE never moves (its target is either
// out of range or the key's own database) and SWAPDB succeeds only as
// SWAPDB 0 0, which changes nothing (S120).

// cmdMove: MOVE key db.
func (c *conn) cmdMove(args [][]byte) {
	if c.s.opts.Cluster {
		c.w.Error(errMoveCluster)
		return
	}
	n, ok := c.int32Arg(args[2])
	if !ok {
		return
	}
	if n != 0 {
		c.w.Error(errDBIndex)
		return
	}
	c.w.Error(errSameObject)
}

// cmdSwapDB: SWAPDB index1 index2.
func (c *conn) cmdSwapDB(args [][]byte) {
	if c.s.opts.Cluster {
		c.w.Error(errSwapDBCluster)
		return
	}
	var ids [2]int64
	for i, msg := range []string{errSwapDBFirst, errSwapDBSecond} {
		n, ok := parseInt(args[1+i])
		if !ok || n != int64(int32(n)) {
			c.w.Error(msg)
			return
		}
		ids[i] = n
	}
	if ids != [2]int64{} {
		c.w.Error(errDBIndex)
		return
	}
	c.w.OK()
}
