package server

import "testing"

// TestEmptyKeyRefusedClearly checks S89: a command on the key "" answers
// errEmptyKey (not the tier's own text); EXISTS, DEL and EXPIRE of it
// answer 0, as of a missing key;
// and what is stored stays as it was.
func TestEmptyKeyRefusedClearly(t *testing.T) {
	_, path := startServer(t, nil)
	r := dialRaw(t, path)
	r.expect([]step{{[]string{"SET", "k", "v"}, "+OK"}})
	refused := "-" + errEmptyKey
	for _, args := range [][]string{
		{"SET", "", "v"}, {"GET", ""}, {"HSET", "", "f", "v"}, {"LPUSH", "", "x"}, {"SADD", "", "m"},
		{"ZADD", "", "1", "m"}, {"INCR", ""}, {"APPEND", "", "x"}, {"DUMP", ""},
	} {
		r.cmd(args...)
		if got := r.reply(); got != refused {
			t.Errorf("%q: %q, want %q", args, got, refused)
		}
	}
	r.expect([]step{{[]string{"EXISTS", ""}, ":0"}, {[]string{"DEL", ""}, ":0"}, {[]string{"EXPIRE", "", "10"}, ":0"}, {[]string{"GET", "k"}, "$v"}, {[]string{"DBSIZE"}, ":1"}})
}
