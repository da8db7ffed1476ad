package numa

import (
	"fmt"
	"strconv"
	"strings"
)

// parseList parses a kernel cpulist/nodelist such as "0-3,5,8-9"
// (Documentation/admin-guide/cputopology.rst format). Empty means none.
func parseList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad list element %q in %q", part, s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad list range %q in %q", part, s)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("list range %q in %q is too large", part, s)
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// formatList renders ids in the kernel's compact form, "-" when empty.
func formatList(ids []int) string {
	if len(ids) == 0 {
		return "-"
	}
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", ids[i], ids[j])
		} else {
			fmt.Fprintf(&b, "%d", ids[i])
		}
		i = j + 1
	}
	return b.String()
}
