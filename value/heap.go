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
	}
	return classes[sort.SearchInts(classes, n)]
}
