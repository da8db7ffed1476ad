package resp

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestParseDouble (R8): the strict reading of a score and the loose one
// of a range's end take what redis-server's strtod-based readers take.
func TestParseDouble(t *testing.T) {
	for _, c := range []struct {
		in     string
		strict bool
		loose  bool
		want   float64
	}{
		{"1", true, true, 1},
		{"-1.5", true, true, -1.5},
		{"+.5", true, true, 0.5},
		{"5.", true, true, 5},
		{"1e3", true, true, 1000},
		{"0x10", true, true, 16},
		{"0x1.8p1", true, true, 3},
		{"inf", true, true, math.Inf(1)},
		{"-Infinity", true, true, math.Inf(-1)},
		{"nan", false, false, 0},
		{"", false, true, 0},
		{" 1", false, true, 1},
		{"1 ", false, false, 0},
		{"1e400", false, true, math.Inf(1)},
		{"-1e400", false, true, math.Inf(-1)},
		{"1e-400", false, true, 0},
		{"4e-320", true, true, 4e-320},
		{"0e-400", true, true, 0},
		{"1_0", false, false, 0},
		{"0x", false, false, 0},
		{"1e", false, false, 0},
		{"abc", false, false, 0},
		{"1\x00x", false, true, 1},
	} {
		f, ok := ParseDouble([]byte(c.in))
		if ok != c.strict || ok && f != c.want {
			t.Errorf("ParseDouble(%q) = %v, %v; want ok %v", c.in, f, ok, c.strict)
		}
		f, ok = ParseDoubleLoose([]byte(c.in))
		if ok != c.loose || ok && f != c.want {
			t.Errorf("ParseDoubleLoose(%q) = %v, %v; want ok %v", c.in, f, ok, c.loose)
		}
	}
}

// TestAppendDouble (R8): "%.17g" as C prints it, infinities as Redis does.
func TestAppendDouble(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1", 0.1: "0.10000000000000001", -1.5: "-1.5", 1e20: "1e+20", 1e-5: "1.0000000000000001e-05",
		123456789012345678: "1.2345678901234568e+17", math.Inf(1): "inf", math.Inf(-1): "-inf",
		math.Copysign(0, -1): "-0", 1e16: "10000000000000000", 3.5e-320: "3.4999610351393905e-320", 1e17: "1e+17",
	} {
		if got := string(AppendDouble(nil, f)); got != want {
			t.Errorf("AppendDouble(%v) = %q, want %q", f, got, want)
		}
	}
	// Integers (printed without strconv's 'g') near the bounds of the
	// integer form and at random, and the numbers beside them, as 'g' 17.
	r := rand.New(rand.NewPCG(8, 8))
	fs := []float64{1e17 - 16, 1e17 - 8, -1e17 + 8, 99999999999999984, 1 << 53, 1<<53 + 2, -(1 << 53), 0.5, -0.5}
	for range 20000 {
		f := math.Trunc(math.Ldexp(r.Float64(), r.IntN(64)))
		if r.IntN(2) == 0 {
			f = -f
		}
		fs = append(fs, f, math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1)))
	}
	for _, f := range fs {
		if got, want := string(AppendDouble(nil, f)), string(strconv.AppendFloat(nil, f, 'g', 17, 64)); got != want {
			t.Errorf("AppendDouble(%v) = %q, want %q", f, got, want)
		}
	}
}
