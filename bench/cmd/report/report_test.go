package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// copyRun copies testdata/run (a quick run's run.jsonl and results.jsonl,
// the hit-ratio log and a guest log) into a temporary directory.
func copyRun(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/run", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := filepath.Join(dst, strings.TrimPrefix(p, "testdata/run"))
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReportFromRun(t *testing.T) {
	dir := copyRun(t)
	md := filepath.Join(dir, "out", "BENCHMARKS.md")
	if err := os.MkdirAll(filepath.Dir(md), 0o755); err != nil {
		t.Fatal(err)
	}
	failed, err := write(dir, md, filepath.Join(dir, "out", "img"), "", false)
	if err != nil || len(failed) > 0 {
		t.Fatalf("write: %v, failed %v", err, failed)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		"## CPU per request against redis-server", "| GET -P 16 |", "## Hit ratio at equal bytes",
		"| zipf=0.99 |", "## Peak RSS", "memcached-ext", "## A fleet sharing", "## The cold tier's I/O against fio",
		"## NVMe passthrough in the QEMU guest", "| Retrieve |", "| Store |", "## DRAM per key",
		"BENCH_SERVER_CPUS=1 BENCH_CLIENT_CPUS=0 BENCH_N=20000", // the exact command
		"2515a3c-dirty", "6.18.44-fc-v1272", "Redis server v=7.0.15", "memcached 1.6.18",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(text, "Quick run") {
		t.Error("a full run's report says it is a quick run")
	}
	links := regexp.MustCompile(`!\[[^]]*\]\(([^)]+)\)`).FindAllStringSubmatch(text, -1)
	if len(links) < 6 {
		t.Errorf("%d charts linked, want at least 6", len(links))
	}
	for _, l := range links {
		st, err := os.Stat(filepath.Join(filepath.Dir(md), l[1]))
		if err != nil || st.Size() == 0 {
			t.Errorf("chart %s: %v", l[1], err)
		}
	}
}

// TestRatioPerRound: ratios pair the two figures of a round and leave out
// a round only one side has.
func TestRatioPerRound(t *testing.T) {
	b := bench{samples: []sample{
		{Case: "c", Round: 1, Server: "ours", Metric: "m", Value: 2},
		{Case: "c", Round: 1, Server: "peer", Metric: "m", Value: 4},
		{Case: "c", Round: 2, Server: "ours", Metric: "m", Value: 9},
		{Case: "c", Round: 2, Server: "peer", Metric: "m", Value: 3},
		{Case: "c", Round: 3, Server: "ours", Metric: "m", Value: 1},
		{Case: "c", Round: 4, Server: "ours", Metric: "m", Value: 8},
		{Case: "c", Round: 4, Server: "peer", Metric: "m", Value: 6},
	}}
	r := b.ratio("c", "ours", "peer", "m")
	if r.n != 3 || r.med != 8.0/6 || r.lo != 0.5 || r.hi != 3 {
		t.Errorf("ratio %+v, want 3 rounds, median 1.33, range 0.5-3", r)
	}
	// The medians of each side are not what the ratio is made of.
	if o, p := b.stat("c", "ours", "m"), b.stat("c", "peer", "m"); o.med/p.med == r.med {
		t.Errorf("ours %v / peer %v happens to be the per-round median: a weak fixture", o.med, p.med)
	}
	if got := r.times(); got != "1.33× (0.50–3.00)" {
		t.Errorf("times %q", got)
	}
}

func TestSpliceKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "B.md")
	before := "# title\n\nintro\n\n" + mdBegin + "\nold\n" + mdEnd + "\n\n## Earlier runs\n\nkept | as | is  \n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := spliceFile(path, mdBegin, mdEnd, "new part\n", true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := strings.Replace(before, "\nold\n", "\nnew part\n", 1)
	if string(b) != want {
		t.Errorf("after splice:\n%s\nwant:\n%s", b, want)
	}
	bare := filepath.Join(dir, "R.md")
	if err := os.WriteFile(bare, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := spliceFile(bare, mdBegin, mdEnd, "x", true); err == nil {
		t.Error("a file without markers was spliced")
	}
	if b, _ := os.ReadFile(bare); string(b) != "no markers\n" {
		t.Errorf("a file without markers changed: %q", b)
	}
}

// TestWritesOnlyWhereTold: the report writes its markdown, its charts and
// the README's part, nothing else; the run's directory is left as it was.
func TestWritesOnlyWhereTold(t *testing.T) {
	run := copyRun(t)
	out := t.TempDir()
	readme := filepath.Join(out, "README.md")
	if err := os.WriteFile(readme, []byte("top\n"+readmeBegin+"\nold\n"+readmeEnd+"\nbottom\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snapshot := func(dir string) []string {
		var fs []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				st, _ := d.Info()
				fs = append(fs, strings.TrimPrefix(p, dir)+" "+st.ModTime().String())
			}
			return nil
		})
		slices.Sort(fs)
		return fs
	}
	runBefore := snapshot(run)
	md := filepath.Join(out, "docs", "B.md")
	os.MkdirAll(filepath.Dir(md), 0o755)
	if _, err := write(run, md, filepath.Join(out, "docs", "img"), readme, true); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(runBefore, snapshot(run)) {
		t.Error("the run's directory changed")
	}
	for _, f := range snapshot(out) {
		name := strings.Fields(f)[0]
		if name != "/README.md" && name != "/docs/B.md" && !strings.HasPrefix(name, "/docs/img/bench-") {
			t.Errorf("wrote %s", name)
		}
	}
	b, _ := os.ReadFile(readme)
	s := string(b)
	if !strings.HasPrefix(s, "top\n"+readmeBegin) || !strings.HasSuffix(s, readmeEnd+"\nbottom\n") ||
		!strings.Contains(s, "docs/img/bench-cpu.png") || !strings.Contains(s, "(docs/B.md)") {
		t.Errorf("README after the report:\n%s", s)
	}
	if b, _ := os.ReadFile(md); !strings.Contains(string(b), "Quick run") {
		t.Error("a quick run's report does not say so")
	}
}

// TestStepWithoutFigures: a step that ran and recorded nothing, or failed,
// is reported and counted.
func TestStepWithoutFigures(t *testing.T) {
	run := copyRun(t)
	steps, err := os.ReadFile(filepath.Join(run, "run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// memory failed; the embedding step's figures are gone.
	s := strings.Replace(string(steps), `"step":"memory","command":"BENCH_SIZES=1536 BENCH_KEYS=20000 BENCH_DRAM=16MiB BENCH_REQS=20000 scripts/bench-memory","status":0`,
		`"step":"memory","command":"BENCH_SIZES=1536 BENCH_KEYS=20000 BENCH_DRAM=16MiB BENCH_REQS=20000 scripts/bench-memory","status":1`, 1)
	if s == string(steps) {
		t.Fatal("the fixture's memory step is not where the test expects it")
	}
	os.WriteFile(filepath.Join(run, "run.jsonl"), []byte(s), 0o644)
	res, _ := os.ReadFile(filepath.Join(run, "results.jsonl"))
	var kept []string
	for l := range strings.Lines(string(res)) {
		if !strings.Contains(l, `"bench":"embedding"`) {
			kept = append(kept, l)
		}
	}
	os.WriteFile(filepath.Join(run, "results.jsonl"), []byte(strings.Join(kept, "")), 0o644)
	md := filepath.Join(run, "B.md")
	failed, err := write(run, md, filepath.Join(run, "img"), "", false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(failed, "memory (exit status 1)") || !slices.Contains(failed, "embedding (no figures)") || len(failed) != 2 {
		t.Errorf("failed %q", failed)
	}
	b, _ := os.ReadFile(md)
	if !strings.Contains(string(b), "FAILED, exit status 1") || !strings.Contains(string(b), "No figures were recorded.") {
		t.Error("the report does not say what failed")
	}
}

func TestParseHitRatio(t *testing.T) {
	out := `BenchmarkHitRatio/zipf=0.99/otter-2   1  2000 ns/op  78.27 hit%  77.1 min-hit%  79.0 max-hit%  1.9 spread-pts  1000 req/s
--- BENCH: BenchmarkHitRatio/zipf=0.99/otter-2
    hitratio_test.go:196: run 1/3: hit 78.27% (1000 req/s, 5 items held)
BenchmarkHitRatio/zipf=0.99/tiercache-dram   1  2000 ns/op  79.25 hit%  1000 req/s
BenchmarkHitRatioCurve/zipf=0.90/budget=2pct/otter-2  1  10 ns/op  48.82 hit%  2054361 req/s
BenchmarkHitRatioCurve/zipf=0.90/budget=1pct/otter-2  1  10 ns/op  43.08 hit%  1 req/s
`
	rows, curves, order := parseHitRatio(out)
	if len(rows) != 1 || rows[0].workload != "zipf=0.99" {
		t.Fatalf("rows %+v", rows)
	}
	if o := rows[0].hit["otter"]; o.med != 78.27 || o.lo != 77.1 || o.hi != 79.0 || o.n < 2 {
		t.Errorf("otter %+v", o)
	}
	if d := rows[0].hit["tiercache-dram"]; d.med != 79.25 || d.n != 1 {
		t.Errorf("tiercache-dram (GOMAXPROCS=1, no suffix) %+v", d)
	}
	if len(order) != 1 || len(curves["zipf=0.90"]) != 2 || curves["zipf=0.90"][0].hit["otter"] != 43.08 {
		t.Errorf("curves %v %+v", order, curves)
	}
}

// TestRatioChartWithZeros is R6: a ratio of 0 (a round that measured no
// CPU tick) neither hangs the log axis's ticks nor stops the chart.
func TestRatioChartWithZeros(t *testing.T) {
	if ts := (ratioTicks{}).Ticks(0, 153); ts != nil {
		t.Fatalf("ticks over [0, 153]: %d, want none", len(ts))
	}
	if ts := (ratioTicks{}).Ticks(0.5, 300); len(ts) == 0 || len(ts) > 20 {
		t.Fatalf("ticks over [0.5, 300]: %d", len(ts))
	}
	path := filepath.Join(t.TempDir(), "zeros.png")
	ss := []summary{{n: 3, med: 0.5, lo: 0, hi: 2}, {n: 3, med: 0, lo: 0, hi: 0}, {n: 3, med: 1.2, lo: 1.1, hi: 1.3}}
	if err := ratioChart(path, "t", "x", []string{"a", "b", "c"}, ss); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("the chart: %v", err)
	}
}
