package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sample is one figure a bench script recorded (scripts/bench-record.sh):
// one server's value of one metric in one round of one case. Round 0 is a
// figure of the whole run.
type sample struct {
	Bench  string  `json:"bench"`
	Case   string  `json:"case"`
	Round  int     `json:"round"`
	Server string  `json:"server"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
}

// step is one line scripts/bench wrote of a step: what ran and how it ended.
type step struct {
	Name    string  `json:"step"`
	Command string  `json:"command"`
	Status  int     `json:"status"`
	Elapsed float64 `json:"elapsed_s"`
	Skipped string  `json:"skipped"` // why it did not run, or ""
}

// run is everything one `scripts/bench` run left in its directory.
type run struct {
	dir     string
	meta    map[string]string
	steps   []*step
	samples []sample
	logs    map[string]string // step name -> its output
}

// readRun reads run.jsonl (scripts/bench's meta and steps), results.jsonl
// (the scripts' figures) and logs/<step>.log from dir; the QEMU guest's
// figures come from its log (Go benchmark lines).
func readRun(dir string) (*run, error) {
	r := &run{dir: dir, meta: map[string]string{}, logs: map[string]string{}}
	err := eachLine(filepath.Join(dir, "run.jsonl"), func(line []byte) error {
		var kind struct {
			Kind  string `json:"kind"`
			Key   string `json:"key"`
			Value string `json:"value"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			return err
		}
		switch kind.Kind {
		case "meta":
			r.meta[kind.Key] = kind.Value
		case "step":
			s := &step{}
			if err := json.Unmarshal(line, s); err != nil {
				return err
			}
			r.steps = append(r.steps, s)
		default:
			return fmt.Errorf("unknown kind %q", kind.Kind)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachLine(filepath.Join(dir, "results.jsonl"), func(line []byte) error {
		var s sample
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		r.samples = append(r.samples, s)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, s := range r.steps {
		b, err := os.ReadFile(filepath.Join(dir, "logs", s.Name+".log"))
		if err == nil {
			r.logs[s.Name] = string(b)
		}
	}
	r.samples = append(r.samples, guestSamples(r.logs["guest"])...)
	return r, nil
}

// eachLine calls f on every non-empty line of the file at path; an error
// names the file and the line.
func eachLine(path string, f func([]byte) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if err := f(line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// step returns the step named name, or nil.
func (r *run) step(name string) *step {
	for _, s := range r.steps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// bench is the figures of one bench: a view of the run's samples.
type bench struct {
	name    string
	samples []sample
}

func (r *run) bench(name string) bench {
	b := bench{name: name}
	for _, s := range r.samples {
		if s.Bench == name {
			b.samples = append(b.samples, s)
		}
	}
	return b
}

// cases are the bench's cases in the order first recorded.
func (b bench) cases() []string {
	var cs []string
	for _, s := range b.samples {
		if !slices.Contains(cs, s.Case) {
			cs = append(cs, s.Case)
		}
	}
	return cs
}

// byRound is one server's values of one metric in one case, by round.
func (b bench) byRound(cs, server, metric string) map[int]float64 {
	m := map[int]float64{}
	for _, s := range b.samples {
		if s.Case == cs && s.Server == server && s.Metric == metric {
			m[s.Round] = s.Value
		}
	}
	return m
}

// stat is the median of one figure over the rounds, with its range.
func (b bench) stat(cs, server, metric string) summary {
	return summarize(values(b.byRound(cs, server, metric)))
}

// ratio is ours/peer of one metric in one case, per round (only rounds
// both have: the peer ran in the same round), summarized.
func (b bench) ratio(cs, ours, peer, metric string) summary {
	o, p := b.byRound(cs, ours, metric), b.byRound(cs, peer, metric)
	var rs []float64
	for r, v := range o {
		if w, ok := p[r]; ok && w != 0 {
			rs = append(rs, v/w)
		}
	}
	return summarize(rs)
}

func values(m map[int]float64) []float64 {
	vs := make([]float64, 0, len(m))
	for _, v := range m {
		vs = append(vs, v)
	}
	return vs
}
