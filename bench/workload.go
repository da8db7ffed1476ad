package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/tiercache/tiercache/bench/internal/load"
)

// The hit-ratio workloads (issue 17, item 2). Each is a deterministic
// sequence of key indexes: the same seed gives the same sequence, so every
// cache and every run of a stability series sees exactly the same requests
// (B1).
//
//   - zipf=0.90, zipf=0.99: nreq Zipf draws over keys 0..nkeys-1 (rank i is
//     key i; the caches hash keys, so the order of the ranks is irrelevant).
//   - scan: the zipf=0.90 sequence (same seed, same draws) with a one-time
//     sequential scan inserted after every scanEvery Zipf requests: scanLen
//     consecutive keys from nkeys upwards, each requested once in the whole
//     sequence (every scan takes fresh keys), so they can only pollute.
//     They are part of the request count: every cache misses them all.

// workload is one request sequence.
type workload struct {
	name  string
	trace []int32 // key indexes, see keyspace
}

// Scan pollution: a scan after every nreq/scanPeriods Zipf requests (100k
// at scale 1), of scanCapFrac of the cache's capacity in keys (budget /
// item bytes): 100 scans, 20 capacities of one-time keys in all.
const (
	scanPeriods = 100
	scanCapFrac = 0.20
)

// zipfSeed is the seed of a Zipf(theta) sequence (as BenchmarkHitRatio
// always used).
func zipfSeed(theta float64) *rand.Rand { return rand.New(rand.NewPCG(42, uint64(theta*100))) }

func zipfWorkload(nkeys, nreq int, theta float64) workload {
	z := load.NewZipf(zipfSeed(theta), nkeys, theta)
	tr := make([]int32, nreq)
	for i := range tr {
		tr[i] = int32(z.Next())
	}
	return workload{name: fmt.Sprintf("zipf=%.2f", theta), trace: tr}
}

// scanWorkload is zipfWorkload(nkeys, nreq, theta) with scans of scanLen
// one-time keys (indexes nkeys and up) after every nreq/scanPeriods requests.
func scanWorkload(nkeys, nreq int, theta float64, scanLen int) workload {
	base := zipfWorkload(nkeys, nreq, theta).trace
	every := max(nreq/scanPeriods, 1)
	tr := make([]int32, 0, nreq+(nreq/every)*scanLen)
	next := int32(nkeys)
	for i, k := range base {
		tr = append(tr, k)
		if (i+1)%every == 0 {
			for range scanLen {
				tr = append(tr, next)
				next++
			}
		}
	}
	return workload{name: "scan", trace: tr}
}

// firstSeen is the number of distinct keys of w: the misses no cache can
// avoid (its compulsory misses).
func (w workload) firstSeen() int {
	var seen []bool
	n := 0
	for _, k := range w.trace {
		if int(k) >= len(seen) {
			seen = append(seen, make([]bool, int(k)+1-len(seen))...)
		}
		if !seen[k] {
			seen[k] = true
			n++
		}
	}
	return n
}

// keyOf is key i's bytes, keyBytes of them below 10^8 keys.
func keyOf(i int) []byte { return []byte(fmt.Sprintf("key:%08d", i)) }

const keyBytes = 12

// keyspace holds the key bytes of every index a workload names ("key:%08d",
// 12 bytes below 10^8 keys).
type keyspace [][]byte

func (ks *keyspace) cover(w workload) {
	top := int32(-1)
	for _, k := range w.trace {
		top = max(top, k)
	}
	for i := len(*ks); i <= int(top); i++ {
		*ks = append(*ks, keyOf(i))
	}
}
