package server

import (
	"strings"
	"testing"
)

// TestGlobMatch: the cases of Redis's KEYS documentation and the corners
// of util.c's stringmatchlen.
func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		yes     []string
		no      []string
	}{
		{"h?llo", []string{"hello", "hallo", "hxllo"}, []string{"hllo", "heello"}},
		{"h*llo", []string{"hllo", "heeeello"}, []string{"hell", "xhllo"}},
		{"h[ae]llo", []string{"hello", "hallo"}, []string{"hillo", "hllo"}},
		{"h[^e]llo", []string{"hallo", "hbllo"}, []string{"hello", "hllo"}},
		{"h[a-b]llo", []string{"hallo", "hbllo"}, []string{"hcllo"}},
		{"h[b-a]llo", []string{"hallo", "hbllo"}, []string{"hcllo"}},
		{`h\*llo`, []string{"h*llo"}, []string{"hello"}},
		{`h\?llo`, []string{"h?llo"}, []string{"hello"}},
		{"*", []string{"", "a", "any:thing/with\x00nul"}, nil},
		{"", []string{""}, []string{"a"}},
		{"a*b*c", []string{"abc", "aXbYc", "abbbc", "a*b*c"}, []string{"aXbY", "bc"}},
		{"*?", []string{"a", "ab"}, []string{""}},
		{"**a**", []string{"a", "xax"}, []string{"", "b"}},
		{"[abc", []string{"a", "c"}, []string{"ab", "d"}},
		{"[]a", nil, []string{"a", "]a"}},
		{`[\]]`, []string{"]"}, []string{`\`}},
		{`[a\-z]`, []string{"a", "-", "z"}, []string{"b"}},
		{`a\`, []string{`a\`}, []string{"a"}},
		{`\[`, []string{"["}, []string{`\[`}},
		{"user:[0-9]*", []string{"user:1", "user:42abc"}, []string{"user:", "user:x1"}},
		{"*:*:*", []string{"a:b:c", "::"}, []string{"a:b"}},
	} {
		for _, s := range tc.yes {
			if !globMatch(tc.pattern, s) {
				t.Errorf("%q should match %q", tc.pattern, s)
			}
		}
		for _, s := range tc.no {
			if globMatch(tc.pattern, s) {
				t.Errorf("%q should not match %q", tc.pattern, s)
			}
		}
	}
	// Many stars against a long near-miss: backtracking stays bounded.
	if globMatch(strings.Repeat("a*", 30)+"b", strings.Repeat("a", 5000)) {
		t.Fatal("a*a*...b matched a run of a's")
	}
}
