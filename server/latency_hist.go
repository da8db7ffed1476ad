package server

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Latency tracking, as redis-server 7.0's (server.c
// updateCommandLatencyHistogram, latency.c fillCommandCDF): each command
// and subcommand that ran has a histogram of its times, made at its first
// call, read by LATENCY HISTOGRAM (its cumulative distribution by powers
// of two) and INFO latencystats (its percentiles). Redis keeps an
// hdr_histogram of 1 ns to 1 s at 2 significant digits
// (server.h LATENCY_HISTOGRAM_MIN_VALUE, _MAX_VALUE, _PRECISION); this
// one has the same layout, so that its buckets, percentiles and the
// values it answers are the ones Redis computes from the same times: 24
// rows of 128 counts, the first row counting 0..255 ns one by one, row r
// > 0 counting 128·2^r..256·2^r-1 ns in steps of 2^(r-1)
// (hdr_histogram.c counts_index: sub_bucket_count 256, bucket_count 23).
// A record is a few shifts and one atomic add; Redis records a command's
// microseconds ×1000, tiercache the nanoseconds it measured.

const (
	histHalfBits = 7                            // hdr's sub_bucket_half_count_magnitude
	histHalf     = 1 << histHalfBits            // sub_bucket_half_count
	histBuckets  = 23                           // hdr's bucket_count for 1..1e9 at 2 digits
	histLen      = (histBuckets + 1) * histHalf // counts_len
	histMinNanos = 1                            // LATENCY_HISTOGRAM_MIN_VALUE
	histMaxNanos = 1_000_000_000                // LATENCY_HISTOGRAM_MAX_VALUE
	histCDFFirst = 1024                         // fillCommandCDF's hdr_iter_log_init: 1024 ns, then ×2
)

// latencyHist is one command's histogram, its counts added atomically by
// every connection.
type latencyHist struct {
	counts [histLen]atomic.Uint64
}

// histIndex is the count a time of v ns (1..1e9) goes to: its row by its
// highest bit past the first 8, then its top 8 bits (hdr's
// get_bucket_index, get_sub_bucket_index, counts_index).
func histIndex(v uint64) int {
	row := bits.Len64(v|0xff) - 8
	return (row+1)<<histHalfBits + int(v>>row) - histHalf
}

// histLowest is the smallest time counted at index i (hdr_value_at_index).
func histLowest(i int) uint64 {
	row := i>>histHalfBits - 1
	sub := uint64(i&(histHalf-1)) + histHalf
	if row < 0 {
		row, sub = 0, sub-histHalf
	}
	return sub << row
}

// histHighest is the largest time counted with v (hdr's
// highest_equivalent_value).
func histHighest(v uint64) uint64 {
	row := bits.Len64(v|0xff) - 8
	return (v>>row)<<row + 1<<row - 1
}

// record counts n runs of d each in st's histogram, made at the first.
func (st *cmdStats) record(d time.Duration, n int) {
	h := st.hist.Load()
	if h == nil {
		st.hist.CompareAndSwap(nil, new(latencyHist))
		h = st.hist.Load()
	}
	v := uint64(min(max(d, histMinNanos), histMaxNanos))
	h.counts[histIndex(v)].Add(uint64(n))
}

// histView is a histogram read out once, so that its total and its
// counts agree.
type histView struct {
	counts [histLen]uint64
	total  uint64
}

func (h *latencyHist) view() *histView {
	v := new(histView)
	for i := range h.counts {
		v.counts[i] = h.counts[i].Load()
		v.total += v.counts[i]
	}
	return v
}

// percentile is the time (ns) at percentile p (0..100), as
// hdr_value_at_percentile answers it: the highest time counted with the
// first count at which the runs counted reach p% of all (rounded), the
// lowest for p = 0.
func (v *histView) percentile(p float64) uint64 {
	want := int64(min(p, 100)/100*float64(v.total) + 0.5)
	want = max(want, 1)
	var cum int64
	for i, n := range v.counts {
		cum += int64(n)
		if cum >= want {
			if p == 0 {
				return histLowest(i)
			}
			return histHighest(histLowest(i))
		}
	}
	return 0
}

// cdfStep is one entry of LATENCY HISTOGRAM's histogram_usec: the runs
// that took at most usec µs.
type cdfStep struct{ usec, calls int64 }

// cdf is the cumulative distribution LATENCY HISTOGRAM answers, as
// fillCommandCDF iterates Redis's histogram (hdr_iter_log_init with 1024
// ns, log base 2): at each level 1024·2^k ns the runs counted up to the
// count holding it, labelled with that count's highest time in µs; past
// the last level that fits under 1 s, all runs, labelled with the
// histogram's highest time (1073741 µs); a level that adds no run is
// left out.
func (v *histView) cdf() []cdfStep {
	var out []cdfStep
	var cum, prev uint64
	i := 0
	for level := uint64(histCDFFirst); ; level *= 2 {
		upto, label := level, histHighest(level)
		if level > histLowest(histLen-1) { // 2^30 ns: no count holds it
			upto, label = math.MaxUint64, histHighest(histLowest(histLen-1))
		}
		for ; i < histLen && histLowest(i) <= upto; i++ {
			cum += v.counts[i]
		}
		if cum > prev {
			out = append(out, cdfStep{int64(label / 1000), int64(cum)})
			prev = cum
		}
		if i == histLen || cum == v.total {
			return out
		}
	}
}

// percentileName is a percentile as Redis names it in INFO and CONFIG
// GET: "%f", its trailing zeros and point cut (util.c trimDoubleString).
func percentileName(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
