package numa

import (
	"slices"
	"testing"
)

// FuzzParseList: any input parses or fails cleanly, and what parses prints
// back (formatList) to a list that parses to the same ids.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"", "0", "0-3,5", "1,3-4,7-7\n", "3-1", "-", ",", "0-65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := parseList(s)
		if err != nil {
			return
		}
		sorted := slices.IsSorted(ids) && len(slices.Compact(slices.Clone(ids))) == len(ids)
		if !sorted {
			return // kernel lists are sorted; formatList assumes it
		}
		back, err := parseList(formatList(ids))
		if len(ids) > 0 && (err != nil || !slices.Equal(back, ids)) {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, ids, formatList(ids), back, err)
		}
	})
}
