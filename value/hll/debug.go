package hll

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// What PFDEBUG and PFSELFTEST look at (hyperloglog.c, "Testing /
// Debugging").

// ToDense is the HyperLogLog v dense: v itself if it is, else a new
// string (PFDEBUG TODENSE and GETREG). ErrNotHLL or ErrCorrupt.
func ToDense(v []byte) ([]byte, error) {
	v = clip(v)
	if err := Check(v); err != nil {
		return nil, err
	}
	if IsDense(v) {
		return v, nil
	}
	return toDense(v)
}

// DenseRegisters appends the 16384 registers of the dense HyperLogLog v
// to dst.
func DenseRegisters(dst []uint8, v []byte) []uint8 {
	for i := range numRegisters {
		dst = append(dst, denseGet(v[HeaderSize:], i))
	}
	return dst
}

// Decode is PFDEBUG DECODE's text of the sparse opcodes of v: "z:n" for
// ZERO, "Z:n" for XZERO, "v:value,n" for VAL, space separated. It does
// not check that they cover the registers, as Redis does not.
func Decode(v []byte) string {
	v = clip(v)
	var sb strings.Builder
	s := v[HeaderSize:]
	for p := 0; p < len(s); {
		span, val, size := op(s, p)
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		switch {
		case val != 0:
			sb.WriteString("v:" + strconv.Itoa(val) + "," + strconv.Itoa(span))
		case size == 2:
			sb.WriteString("Z:" + strconv.Itoa(span))
		default:
			sb.WriteString("z:" + strconv.Itoa(span))
		}
		p += size
	}
	return sb.String()
}

// SelfTest is PFSELFTEST's check, after Redis's: random values written
// to every dense register read back unchanged, and elements added one by
// one to a sparse and a dense HyperLogLog count the same while the sparse
// one stays sparse, within six standard errors of the truth at 10, 100,
// ... up to 1,000,000 (Redis goes to 10,000,000). It reports whether all
// held.
func SelfTest(seed uint64) bool {
	r := rand.New(rand.NewPCG(seed, 1))
	regs := make([]byte, DenseSize-HeaderSize)
	want := make([]uint8, numRegisters)
	for range 100 {
		for i := range want {
			want[i] = uint8(r.IntN(registerMax + 1))
			denseSet(regs, i, want[i])
		}
		for i, w := range want {
			if denseGet(regs, i) != w {
				return false
			}
		}
	}
	sparse, dense := New(), make([]byte, DenseSize)
	copy(dense, sparse[:HeaderSize])
	dense[4] = encDense
	relErr := 1.04 / math.Sqrt(numRegisters)
	var buf [8]byte
	base := r.Uint64()
	for n, check := 1, 1; n <= 1_000_000; n++ {
		x := uint64(n) ^ base
		for i := range buf {
			buf[i] = byte(x >> (8 * i))
		}
		sparse, _, _ = addOne(sparse, buf[:], DefaultSparseMaxBytes)
		dense, _, _ = addOne(dense, buf[:], DefaultSparseMaxBytes)
		if n != check {
			continue
		}
		check *= 10
		if n < DefaultSparseMaxBytes/2 && IsDense(sparse) {
			return false
		}
		invalidate(sparse) // addOne leaves a dense string's cache as it was
		invalidate(dense)
		a, _, err1 := Count(sparse)
		b, _, err2 := Count(dense)
		if err1 != nil || err2 != nil || a != b {
			return false
		}
		maxErr := math.Ceil(relErr * 6 * float64(n))
		if n == 10 {
			maxErr = 1
		}
		if math.Abs(float64(n)-float64(b)) > maxErr {
			return false
		}
	}
	return true
}
