package main

import (
	"fmt"
	"strconv"
	"strings"
)

// nvmekv: scripts/bench-nvmekv, the emulated namespace against fio.
func (rp *report) nvmekv() {
	b := rp.run.bench("nvmekv")
	cases := b.cases()
	if !rp.section("nvmekv", "The cold tier's I/O against fio", len(cases) > 0) {
		return
	}
	rp.para("4 KiB Stores and Retrieves on the emulated KV namespace (nvmekv/emu) in Go benchmarks, and fio " +
		"(io_uring, O_DIRECT, 4 KiB, the same queue depth) on the same file system: a Retrieve round is compared " +
		"with the mean of the fio runs just before and after it over the same span of the same file, QD 1 with a " +
		"fio run at iodepth 1 just after. The \"layer below\" rows read through the ring and the Front without the " +
		"KV engine, to show where a gap to fio comes from. Above 1×, faster than fio.")
	var rows [][]string
	var ratios []summary
	for _, c := range cases {
		r := b.ratio(c, "tiercache", "fio", "mb_s")
		ratios = append(ratios, r)
		rows = append(rows, []string{c, b.stat(c, "fio", "mb_s").format(1), b.stat(c, "tiercache", "mb_s").format(1),
			"**" + r.times() + "**"})
	}
	rp.table([]string{"workload", "fio, MB/s", "tiercache, MB/s", "tiercache / fio"}, rows)
	rp.chart("bench-io.png", "cold tier I/O against fio, by workload", func(path string) error {
		return ratioChart(path, "4 KiB I/O on the emulated namespace / fio on the same file (higher is better)",
			"tiercache / fio: median of the rounds, bar: their range", cases, ratios)
	})
	c := "Retrieve 4 KiB, QD 64: 1 goroutine x batches of 64"
	if r := b.ratio(c, "tiercache", "fio", "mb_s"); r.ok() {
		rp.bullets = append(rp.bullets, fmt.Sprintf("cold reads, batches of 64 4 KiB values (an MGET of cold keys): %s fio's rate on the same file", r.times()))
	}
}

// guestSamples turns the guest's Go benchmark lines
// (BenchmarkNVMe<Op>/round=R/<target>) into samples of the bench "guest".
func guestSamples(out string) []sample {
	var ss []sample
	for _, g := range parseGoBench(out) {
		p := g.parts()
		mbs, ok := g.figures["MB/s"]
		if len(p) != 3 || !strings.HasPrefix(p[0], "NVMe") || !strings.HasPrefix(p[1], "round=") || !ok {
			continue
		}
		r, err := strconv.Atoi(strings.TrimPrefix(p[1], "round="))
		if err != nil {
			continue
		}
		ss = append(ss, sample{Bench: "guest", Case: strings.TrimPrefix(p[0], "NVMe"), Round: r + 1, Server: p[2],
			Metric: "mb_s", Value: mbs})
	}
	return ss
}

// guest: the QEMU guest's passthrough benchmarks.
func (rp *report) guest() {
	b := rp.run.bench("guest")
	cases := b.cases()
	if !rp.section("guest", "NVMe passthrough in the QEMU guest against the block layer", len(cases) > 0) {
		return
	}
	rp.para("In the QEMU guest (TCG, an emulated NVMe controller, Linux 6.12 with one poll queue): batches of 16 " +
		"Retrieves of 4000-byte values (one aligned 4 KiB read each) and of 16 Stores on the same namespace through " +
		"NVM passthrough (`uring_cmd` on /dev/ng1n1), through passthrough with IOPOLL read rings, and through the " +
		"block layer (io_uring read/write, O_DIRECT, on /dev/nvme1n1), in interleaved rounds. Under TCG only the " +
		"ratio means anything. IOPOLL changes only reads: its Store row is plain passthrough again, a measure of " +
		"the noise. Above 1×, passthrough is faster.")
	var rows [][]string
	for _, c := range cases {
		rows = append(rows, []string{c, b.stat(c, "block", "mb_s").format(1), b.stat(c, "passthrough", "mb_s").format(1),
			"**" + b.ratio(c, "passthrough", "block", "mb_s").times() + "**", b.stat(c, "passthrough-iopoll", "mb_s").format(1),
			b.ratio(c, "passthrough-iopoll", "block", "mb_s").times()})
	}
	rp.table([]string{"workload", "block layer, MB/s", "passthrough, MB/s", "passthrough / block layer",
		"passthrough + IOPOLL, MB/s", "passthrough + IOPOLL / block layer"}, rows)
	if r := b.ratio("Retrieve", "passthrough", "block", "mb_s"); r.ok() {
		rp.bullets = append(rp.bullets, fmt.Sprintf("NVMe passthrough in the QEMU guest: Retrieves at %s the block layer's rate", r.times()))
	}
}

// cacheLibIndexBytes is the DRAM CacheLib's BlockCache keeps per item, as
// its documentation gives it (CacheLib "Navy" architecture notes); it is
// not run here.
const cacheLibIndexBytes = 12

// coldScale: scripts/bench-cold-scale, DRAM per key only the cold tier holds.
func (rp *report) coldScale() {
	b := rp.run.bench("cold-scale")
	cases := b.cases()
	if !rp.section("cold-scale", "DRAM per key the cold tier alone holds, and opening a big store", len(cases) > 0) {
		return
	}
	c := cases[0]
	rp.para("%s, written through redis-cli --pipe in two steps (a tenth, then the rest), the flusher drained after "+
		"each: the cost per key is the growth between the two over the keys added. The peer is CacheLib "+
		"BlockCache's documented %d B of DRAM per item, not run here. Then "+
		"the sidecar is restarted after a clean stop (its index from the checkpoint) and after a SIGKILL (every "+
		"region scanned).", c, cacheLibIndexBytes)
	st := func(m string) summary { return b.stat(c, "tiercache", m) }
	vsCacheLib := func(s summary) string {
		if !s.ok() {
			return "–"
		}
		return "**" + num(s.med/cacheLibIndexBytes, 2) + "×**"
	}
	lib := fmt.Sprintf("%d B (documented)", cacheLibIndexBytes)
	rows := [][]string{
		{"DRAM (RSS) per key added", st("rss_b_per_key").format(1) + " B", lib, vsCacheLib(st("rss_b_per_key"))},
		{"of it Go heap (the tier's directory)", st("heap_b_per_key").format(1) + " B", "–", "–"},
		{"the cold index's own bytes per record (INFO cold_index_bytes)", st("index_b_per_record").format(1) + " B", lib,
			vsCacheLib(st("index_b_per_record"))},
		{"open to loading:0 from the checkpoint", st("open_checkpoint_ms").format(0) + " ms", "–", "–"},
		{"open to loading:0 by scan, after SIGKILL", st("open_scan_ms").format(0) + " ms", "–", "–"},
		{"DBSIZE after the clean restart / after the SIGKILL", st("dbsize_checkpoint").format(0) + " / " +
			st("dbsize_scan").format(0), "–", "–"},
	}
	rp.table([]string{"figure", "tiercache", "CacheLib BlockCache", "ratio"}, rows)
}
