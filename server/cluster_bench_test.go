package server

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkMGetCluster measures MGET of 8 keys of one slot (hash tags),
// 16 per batch over the Unix socket, with cluster mode off and on: the
// cost of the CROSSSLOT check (one CRC16 a key) beside the command's.
func BenchmarkMGetCluster(b *testing.B) {
	var batch strings.Builder
	for range 16 {
		batch.WriteString("*9\r\n$4\r\nMGET\r\n")
		for i := range 8 {
			k := fmt.Sprintf("{user:1234}:field:%03d", i)
			fmt.Fprintf(&batch, "$%d\r\n%s\r\n", len(k), k)
		}
	}
	reply := strings.Repeat("*8\r\n"+strings.Repeat("$-1\r\n", 8), 16)
	for _, cluster := range []bool{false, true} {
		b.Run(fmt.Sprintf("cluster=%v", cluster), func(b *testing.B) {
			_, path := startServerWith(b, newTierCache(b), func(o *Options) {
				if cluster {
					o.Cluster, o.TCPAddr, o.RequirePass = true, "127.0.0.1:0", "pw"
				}
			})
			benchPipelined16(b, path, batch.String(), len(reply), "MGET")
		})
	}
}

// BenchmarkSlotCheck8 measures the CROSSSLOT check alone (eachKey and
// slotCheck) on MGET's 8 keys of one slot.
func BenchmarkSlotCheck8(b *testing.B) {
	cmd := newCommandTable(nil)["mget"]
	args := [][]byte{[]byte("MGET")}
	for i := range 8 {
		args = append(args, fmt.Appendf(nil, "{user:1234}:field:%03d", i))
	}
	b.ReportAllocs()
	for b.Loop() {
		var sc slotCheck
		cmd.eachKey(args, func(k []byte) bool { return sc.add(k) })
		if sc.cross {
			b.Fatal("cross")
		}
	}
}
