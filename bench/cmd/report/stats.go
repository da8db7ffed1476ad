package main

import (
	"fmt"
	"math"
	"slices"
)

// summary is the median of some values with their range.
type summary struct {
	n           int
	med, lo, hi float64
}

// summarize: the median (the mean of the middle two of an even count) and
// the smallest and largest value.
func summarize(vs []float64) summary {
	if len(vs) == 0 {
		return summary{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{n: len(s), med: m, lo: s[0], hi: s[len(s)-1]}
}

func (s summary) ok() bool { return s.n > 0 }

// format is the median with prec decimals, and "(lo–hi)" when there were
// several values; "–" when there were none.
func (s summary) format(prec int) string {
	if s.n == 0 {
		return "–"
	}
	if s.n == 1 {
		return num(s.med, prec)
	}
	return fmt.Sprintf("%s (%s–%s)", num(s.med, prec), num(s.lo, prec), num(s.hi, prec))
}

// times formats a ratio: "0.85× (0.72–0.92)".
func (s summary) times() string {
	if s.n == 0 {
		return "–"
	}
	if s.n == 1 {
		return num(s.med, 2) + "×"
	}
	return fmt.Sprintf("%s× (%s–%s)", num(s.med, 2), num(s.lo, 2), num(s.hi, 2))
}

// num formats v with prec decimals, thousands apart with commas when it
// has no decimals.
func num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if prec > 0 || math.Abs(v) < 1000 {
		return fmt.Sprintf("%.*f", prec, v)
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if v < 0 {
		return "-" + string(out)
	}
	return string(out)
}
