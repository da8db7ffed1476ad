package server

import "testing"

// TestHugeArgumentsDoNotOverflow: offsets and times near the int64 limits
// get Redis 7.0's answers (and never a wrapped sum): SETRANGE past
// max_value is refused without changing the key, EXPIRE and PEXPIRE take
// what Redis takes (up to LLONG_MAX/1000 seconds, or milliseconds that
// do not overflow when added to now) and refuse the rest.
func TestHugeArgumentsDoNotOverflow(t *testing.T) {
	_, path := startServerWith(t, newTierCache(t), nil)
	r := dialRaw(t, path)
	r.expect([]step{
		{[]string{"SET", "s", "abc"}, "+OK"},
		{[]string{"SETRANGE", "s", "9223372036854775807", "ab"}, "-ERR string exceeds maximum allowed size (max_value, 536870912 bytes)"},
		{[]string{"SETRANGE", "s", "9223372036854775806", "a"}, "-ERR string exceeds maximum allowed size (max_value, 536870912 bytes)"},
		{[]string{"GET", "s"}, "$abc"},
		{[]string{"EXPIRE", "s", "10000000000"}, ":1"},
		{[]string{"PEXPIRE", "s", "10000000000000"}, ":1"},
		{[]string{"EXPIRE", "s", "9223372036854775"}, "-ERR invalid expire time in 'expire' command"},
		{[]string{"EXPIRE", "s", "9223372036854776"}, "-ERR invalid expire time in 'expire' command"},
		{[]string{"PEXPIRE", "s", "9223372036854775807"}, "-ERR invalid expire time in 'pexpire' command"},
		{[]string{"PEXPIREAT", "s", "9223372036854775807"}, ":1"},
		{[]string{"EXPIREAT", "s", "9223372036854776"}, "-ERR invalid expire time in 'expireat' command"},
		{[]string{"GET", "s"}, "$abc"},
	})
}
