package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// report builds the generated part of BENCHMARKS.md, its charts and the
// README's summary from one run.
type report struct {
	run     *run
	quick   bool
	imgDir  string // where the PNGs are written
	imgLink string // that directory as the markdown links it
	rawLink string // where the run's logs and raw figures are, as the markdown links it
	md      strings.Builder
	bullets []string // the README's summary, a line per section with figures
	failed  []string // steps that failed or left no figures (R4)
}

// section opens the part of one step: its heading, its exact command and
// how long it took, or why it did not run. It says whether the step has
// figures to show: a step that ran but recorded none counts as failed.
func (rp *report) section(name, title string, has bool) bool {
	fmt.Fprintf(&rp.md, "## %s\n\n", title)
	s := rp.run.step(name)
	switch {
	case s == nil:
		rp.md.WriteString("Not run: scripts/bench did not record this step.\n\n")
		return false
	case s.Skipped != "":
		fmt.Fprintf(&rp.md, "Not run: %s.\n\n", s.Skipped)
		return false
	}
	fmt.Fprintf(&rp.md, "`%s` (%s", s.Command, duration(s.Elapsed))
	if s.Status != 0 {
		fmt.Fprintf(&rp.md, "; FAILED, exit status %d: see its log", s.Status)
		rp.failed = append(rp.failed, fmt.Sprintf("%s (exit status %d)", name, s.Status))
	}
	rp.md.WriteString(")\n\n")
	if !has {
		rp.md.WriteString("No figures were recorded.\n\n")
		if s.Status == 0 {
			rp.failed = append(rp.failed, name+" (no figures)")
		}
	}
	return has
}

// table writes a markdown table.
func (rp *report) table(header []string, rows [][]string) {
	rp.md.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		rp.md.WriteString("---|")
	}
	rp.md.WriteString("\n")
	for _, r := range rows {
		rp.md.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	rp.md.WriteString("\n")
}

// chart links the PNG file that draw wrote into imgDir; a chart that could
// not be drawn is said so in its place and fails the report.
func (rp *report) chart(file, alt string, draw func(path string) error) {
	if err := draw(filepath.Join(rp.imgDir, file)); err != nil {
		fmt.Fprintf(&rp.md, "(chart %s not drawn: %v)\n\n", file, err)
		rp.failed = append(rp.failed, "chart "+file+": "+err.Error())
		return
	}
	fmt.Fprintf(&rp.md, "![%s](%s/%s)\n\n", alt, rp.imgLink, file)
}

// rawWhere says where the run's logs and raw figures are, for a sentence.
func (rp *report) rawWhere() string {
	if rp.rawLink == "." {
		return "beside this file (logs/, run.jsonl, results.jsonl)"
	}
	return fmt.Sprintf("in [%s/](%s/)", rp.rawLink, rp.rawLink)
}

func (rp *report) para(format string, args ...any) {
	fmt.Fprintf(&rp.md, format+"\n\n", args...)
}

// duration formats seconds as "42 s" or "3 min 12 s".
func duration(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Seconds()))
	}
	if d < time.Hour {
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// build writes the whole generated part: the run's header, then a section
// per step.
func (rp *report) build() {
	rp.header()
	rp.redis()
	rp.hitRatio()
	rp.memory()
	rp.embedding()
	rp.shared()
	rp.nvmekv()
	rp.guest()
	rp.coldScale()
}

func (rp *report) header() {
	m := rp.run.meta
	if rp.quick {
		rp.para("> **Quick run** (`scripts/bench --quick`): a check that the harness still works, at toy sizes, " +
			"with the builds and other work of a shared machine around it. These figures are not compared with " +
			"anything and are not tiercache's figures: docs/BENCHMARKS.md has those, from a full run.")
	}
	total := 0.0
	for _, s := range rp.run.steps {
		total += s.Elapsed
	}
	rp.para("Measured by `%s` at %s (committed %s), started %s; its steps took %s.",
		m["command"], m["commit"], m["commit_date"], m["date"], duration(total))
	rp.para("Machine: %s CPUs (%s), %s of memory, Linux %s; load average %s at the start and %s at the end. "+
		"Peers: %s; %s; %s; %s.", m["cpus"], m["cpu_model"], m["memory"], m["kernel"], m["load_start"], m["load_end"],
		m["redis"], m["memcached"], m["fio"], m["go"])
	rp.para("Every row gives the peer and tiercache from the same run, each as the median over the rounds with "+
		"its range (lowest–highest), and the ratio as the median of the per-round ratios (each round ran "+
		"both back to back) with its range. The machine is shared: a ratio is what counts, not a rate. "+
		"Below each section is its exact command; the logs and the raw figures are %s.", rp.rawWhere())
	var rows [][]string
	for _, s := range rp.run.steps {
		res := "ok"
		switch {
		case s.Skipped != "":
			res = "not run: " + s.Skipped
		case s.Status != 0:
			res = fmt.Sprintf("FAILED (exit status %d)", s.Status)
		}
		t := duration(s.Elapsed)
		if s.Skipped != "" {
			t = "–"
		}
		rows = append(rows, []string{s.Name, "`" + s.Command + "`", t, res})
	}
	rp.table([]string{"step", "command", "time", "result"}, rows)
}
