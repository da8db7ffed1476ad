package value

import "sort"

// The Go heap a live structure takes is measured from its allocations'
// sizes as the runtime rounds them: a small allocation takes its size
// class, a large one whole pages. The classes are read off the runtime
// itself when the package is loaded (growslice rounds a byte slice's
// capacity up to the size class it allocates), not copied from its
// sources, so they follow the toolchain.

// smallMax is the largest small allocation (runtime/sizeclasses.go's
// _MaxSmallSize); larger ones take whole pages of largePage bytes.
const (
	smallMax  = 32 << 10
	largePage = 8 << 10
)

// classes are the runtime's size classes up to smallMax, ascending.
var classes = probeClasses()

// byStep looks a class up by size, as the runtime's own tables do: the
// class of n is byStep[(n+7)/8] up to 1024 bytes and
// byStep[1024/8+(n-1024+127)/128] above, exact while every class up to
// 1024 is a multiple of 8 and every one above a multiple of 128 (checked
// as it is built: else it is nil, and AllocSize searches classes).
var byStep = stepTable()

func stepTable() []int32 {
	var t []int32
	for _, c := range classes {
		if c <= 1024 && c%8 != 0 || c > 1024 && c%128 != 0 {
			return nil
		}
	}
	for n := 0; n <= 1024; n += 8 {
		t = append(t, int32(classes[sort.SearchInts(classes, max(n, 1))]))
	}
	for n := 1024 + 128; n <= smallMax; n += 128 {
		t = append(t, int32(classes[sort.SearchInts(classes, n)]))
	}
	return t
}

func probeClasses() []int {
	var cs []int
	for n := 1; n <= smallMax; {
		c := cap(append([]byte(nil), make([]byte, n)...))
		cs = append(cs, c)
		n = c + 1
	}
	return cs
}

// AllocSize is the heap an allocation of n bytes takes (0 for none).
func AllocSize(n int) int {
	switch {
	case n <= 0:
		return 0
	case n > smallMax:
		return (n + largePage - 1) / largePage * largePage
	case byStep == nil:
		return classes[sort.SearchInts(classes, n)]
	case n <= 1024:
		return int(byStep[(n+7)/8])
	}
	return int(byStep[1024/8+(n-1024+127)/128])
}
