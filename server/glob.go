package server

// globMatch reports whether s matches pattern the way Redis's KEYS and SCAN
// MATCH do (util.c: stringmatchlen, case-sensitive): * matches any run of
// bytes, ? any one byte, [abc] one of a set, [^abc] one byte not in it,
// [a-z] a range (either order), and \x the byte x, also inside a set. A
// set left open at the end of the pattern ends there; a trailing \ is a
// literal \. It backtracks only to the last *, so it takes at most
// len(pattern)*len(s) steps.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) || p < len(pattern) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				for p < len(pattern) && pattern[p] == '*' {
					p++
				}
				starP, starI = p, i
				continue
			case '?':
				if i < len(s) {
					p, i = p+1, i+1
					continue
				}
			case '[':
				if i < len(s) {
					if ok, next := matchSet(pattern, p+1, s[i]); ok {
						p, i = next, i+1
						continue
					}
				}
			case '\\':
				if p+1 < len(pattern) {
					if i < len(s) && s[i] == pattern[p+1] {
						p, i = p+2, i+1
						continue
					}
					break
				}
				if i < len(s) && s[i] == '\\' {
					p, i = p+1, i+1
					continue
				}
			default:
				if i < len(s) && s[i] == pattern[p] {
					p, i = p+1, i+1
					continue
				}
			}
		}
		// A mismatch: let the last * take one more byte, if there is one.
		if starP < 0 || starI >= len(s) {
			return false
		}
		starI++
		p, i = starP, starI
	}
	return true
}

// matchSet matches c against the set that starts at pattern[p] (just after
// its '[') and returns whether it matched and where the pattern goes on.
func matchSet(pattern string, p int, c byte) (bool, int) {
	not := p < len(pattern) && pattern[p] == '^'
	if not {
		p++
	}
	match := false
	for p < len(pattern) {
		switch {
		case pattern[p] == '\\' && p+1 < len(pattern):
			match = match || pattern[p+1] == c
			p += 2
		case pattern[p] == ']':
			return match != not, p + 1
		case p+2 < len(pattern) && pattern[p+1] == '-':
			lo, hi := pattern[p], pattern[p+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			match = match || (lo <= c && c <= hi)
			p += 3
		default:
			match = match || pattern[p] == c
			p++
		}
	}
	return match != not, p
}
