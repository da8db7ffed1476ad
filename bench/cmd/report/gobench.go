package main

import (
	"regexp"
	"strconv"
	"strings"
)

// goBench is one result line of `go test -bench`: the benchmark's name
// (without the -GOMAXPROCS suffix) and its figures by unit.
type goBench struct {
	name    string
	figures map[string]float64 // unit -> value: "ns/op", "MB/s", "hit%", ...
}

var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// parseGoBench returns every result line in out (a line starting with
// "Benchmark" followed by an iteration count and value-unit pairs); the
// rest (logs, a guest's console) is ignored.
func parseGoBench(out string) []goBench {
	var bs []goBench
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		b := goBench{name: procsSuffix.ReplaceAllString(f[0], ""), figures: map[string]float64{}}
		ok := true
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				ok = false
				break
			}
			b.figures[f[i+1]] = v
		}
		if ok {
			bs = append(bs, b)
		}
	}
	return bs
}

// parts splits a benchmark name at its slashes, "Benchmark" dropped from
// the first.
func (b goBench) parts() []string {
	return strings.Split(strings.TrimPrefix(b.name, "Benchmark"), "/")
}
