package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The markers around the generated parts. Everything outside them is kept
// byte for byte (R3).
const (
	mdBegin     = "<!-- begin: written by scripts/bench (bench/cmd/report); change the generator, not this part -->"
	mdEnd       = "<!-- end: written by scripts/bench -->"
	readmeBegin = "<!-- begin: benchmark summary, written by scripts/bench (bench/cmd/report) -->"
	readmeEnd   = "<!-- end: benchmark summary -->"
)

var errNoMarkers = errors.New("has no markers of a generated part")

// splice replaces what lies between begin and end in text with content.
func splice(text, begin, end, content string) (string, error) {
	i := strings.Index(text, begin)
	j := strings.Index(text, end)
	if i < 0 || j < i {
		return "", errNoMarkers
	}
	return text[:i+len(begin)] + "\n" + strings.TrimSpace(content) + "\n" + text[j:], nil
}

// spliceFile replaces the generated part of the file at path with content.
// A file that does not exist is written whole, the content between the
// markers, when create is set; one without the markers is refused.
func spliceFile(path, begin, end, content string, create bool) error {
	old, err := os.ReadFile(path)
	var text string
	switch {
	case err == nil:
		if text, err = splice(string(old), begin, end, content); err != nil {
			return fmt.Errorf("%s %w (%q ... %q): not overwritten", path, err, begin, end)
		}
	case os.IsNotExist(err) && create:
		text = "# tiercache benchmarks\n\n" + begin + "\n" + strings.TrimSpace(content) + "\n" + end + "\n"
	default:
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// summary is the README's part: where the figures come from, a line per
// section, the CPU chart and the link to the report.
func (rp *report) summary(readme, md string) string {
	m := rp.run.meta
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `scripts/bench` at %s on %s, on a %s-CPU machine shared with other work: each figure "+
		"against its peer in the same run, as the median of the per-round ratios with their range.\n\n",
		m["commit"], m["date"], m["cpus"])
	for _, l := range rp.bullets {
		b.WriteString("- " + l + "\n")
	}
	chart := filepath.Join(rp.imgDir, "bench-cpu.png")
	if _, err := os.Stat(chart); err == nil {
		fmt.Fprintf(&b, "\n![server CPU per request, tiercache / redis-server, by command](%s)\n", rel(readme, chart))
	}
	fmt.Fprintf(&b, "\nEvery table and chart, the exact commands and the earlier runs: [%s](%s).\n", rel(readme, md), rel(readme, md))
	return b.String()
}
