// Command report turns one run of scripts/bench into the benchmark report:
// the tables and PNG charts of docs/BENCHMARKS.md and the README's short
// summary (doc.go has what it promises).
//
//	go run ./cmd/report -in RUNDIR -md ../docs/BENCHMARKS.md -img ../docs/img -readme ../README.md
//	go run ./cmd/report -in RUNDIR -quick -md RUNDIR/BENCHMARKS.md -img RUNDIR/img
//
// RUNDIR is what scripts/bench left: run.jsonl, results.jsonl and
// logs/<step>.log. It exits 1 when a step failed or left no figures (after
// writing what it could), 2 when it could not read or write.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	in := flag.String("in", "", "the run's directory (scripts/bench's output)")
	md := flag.String("md", "", "the markdown to write: its generated part is replaced when it has the markers, else it is written whole")
	img := flag.String("img", "", "directory for the PNG charts (default: img beside -md)")
	readme := flag.String("readme", "", "a README whose benchmark summary (between its markers) to replace")
	quick := flag.Bool("quick", false, "a quick run: say that its figures are not compared")
	flag.Parse()
	if *in == "" || *md == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *img == "" {
		*img = filepath.Join(filepath.Dir(*md), "img")
	}
	failed, err := write(*in, *md, *img, *readme, *quick)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(2)
	}
	if len(failed) > 0 {
		fmt.Fprintln(os.Stderr, "report: failed or without figures: "+strings.Join(failed, "; "))
		os.Exit(1)
	}
}

// write builds the report of the run in dir into md, img and readme, and
// returns what failed in the run.
func write(dir, md, img, readme string, quick bool) ([]string, error) {
	r, err := readRun(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(img, 0o755); err != nil {
		return nil, err
	}
	rp := &report{run: r, quick: quick, imgDir: img, imgLink: rel(md, img), rawLink: rel(md, dir)}
	rp.build()
	if err := spliceFile(md, mdBegin, mdEnd, rp.md.String(), true); err != nil {
		return nil, err
	}
	if readme != "" {
		if err := spliceFile(readme, readmeBegin, readmeEnd, rp.summary(readme, md), false); err != nil {
			return nil, err
		}
	}
	return rp.failed, nil
}

// rel is target's path from the directory of the file from, for a link.
func rel(from, target string) string {
	a, err1 := filepath.Abs(filepath.Dir(from))
	b, err2 := filepath.Abs(target)
	if err1 != nil || err2 != nil {
		return target
	}
	p, err := filepath.Rel(a, b)
	if err != nil {
		return b
	}
	return filepath.ToSlash(p)
}
