package server

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Hash field expiry in TestAggregatesColdModel. redis-server 7.0 has none
// (Redis 7.4 added HEXPIRE and its kin), so the model keeps which fields
// have an expiry (m.fexp) and answers those commands itself from what
// redis-server holds, and mirrors a field's expiring as the HDEL of it
// there. The expiries are an hour or more away, or in the past, or a few
// milliseconds away and waited for: the replies are deterministic.

const hfeHour = 3_600_000

// hfeCommand runs a field expiry command on ours, answers it from the
// peer and m.fexp, and compares.
func (m *aggModel) hfeCommand(step int) {
	k := m.key(0)
	var fields []string
	for range 1 + m.r.IntN(3) {
		if f := m.hfeField(k); !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	withFields := func(cmd ...string) []string {
		return append(append(cmd, "FIELDS", strconv.Itoa(len(fields))), fields...)
	}
	switch m.r.IntN(6) {
	case 0, 1: // an hour and more away, later at every step (GT and LT are strict)
		cond := []string{"", "NX", "XX", "GT", "LT"}[m.r.IntN(5)]
		cmd := []string{"HPEXPIRE", k, strconv.Itoa(hfeHour + step)}
		if cond != "" {
			cmd = append(cmd, cond)
		}
		m.hfeSame(withFields(cmd...), k, fields, func(has bool) (int, bool) {
			ok := map[string]bool{"": true, "NX": !has, "XX": has, "GT": has, "LT": !has}[cond]
			if !ok {
				return 0, has // not set: the field keeps what it had
			}
			return 1, true
		})
	case 2: // in the past: the fields are deleted (2)
		m.hfeSame(withFields("HPEXPIREAT", k, "1"), k, fields, func(bool) (int, bool) { return 2, false })
	case 3:
		m.hfeSame(withFields("HPERSIST", k), k, fields, func(has bool) (int, bool) {
			if has {
				return 1, false
			}
			return -1, false
		})
	case 4:
		m.hfeSame(withFields("HPTTL", k), k, fields, func(has bool) (int, bool) {
			if has {
				return 1, true // normalized: any TTL > 0
			}
			return -1, false
		})
	default: // a few ms away, waited for: the fields expire in ours
		at := time.Now().Add(30 * time.Millisecond)
		m.hfeLoose = true // at may have passed when ours runs it: 2, deleted, for 1
		m.hfeSame(withFields("HPEXPIREAT", k, strconv.FormatInt(at.UnixMilli(), 10)), k, fields, func(bool) (int, bool) { return 1, true })
		m.hfeLoose = false
		time.Sleep(time.Until(at) + 10*time.Millisecond)
		for _, f := range fields {
			if m.fexp[k][f] {
				m.peerDo("HDEL", k, f)
				delete(m.fexp[k], f)
			}
		}
		// A hash whose last field expired is deleted by the sweeper
		// (fieldexpiry.go), as by Redis's active expiry: until then
		// EXISTS, DEL and TYPE still count it, in Redis 7.4 too. Wait
		// for it.
		want := m.peerDo("EXISTS", k).String()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			got, err := m.ours.do([]string{"EXISTS", k})
			if err != nil {
				m.fatalf("EXISTS: %v", err)
			}
			if got.String() == want {
				break
			}
			if time.Now().After(deadline) {
				m.fatalf("%s: its fields expired, EXISTS answers %q, redis-server %q", k, got.String(), want)
			}
		}
	}
}

// hfeField is a field of k: one the peer holds (most of the time) or any.
func (m *aggModel) hfeField(k string) string {
	if m.r.IntN(4) != 0 {
		if p := m.peerDo("HRANDFIELD", k); p.head[0] == '$' && p.body != "" {
			return strings.TrimSuffix(p.body, "\r\n")
		}
	}
	return m.elem()
}

// hfeSame sends cmd (of key k, on fields) to ours and compares its reply
// with the model's: -2 for a field the peer lacks, else answer(whether it
// has an expiry): the integer, and whether the field has one after. A
// field answered 2 is deleted (in the peer too).
func (m *aggModel) hfeSame(cmd []string, k string, fields []string, answer func(has bool) (int, bool)) {
	m.t.Helper()
	m.note(cmd)
	typ := m.peerDo("TYPE", k).head
	var want string
	var apply func()
	switch typ {
	case "+none\r\n", "+hash\r\n":
		var items []string
		var changes []func()
		for _, f := range fields {
			if m.peerDo("HEXISTS", k, f).head == ":0\r\n" {
				items = append(items, ":-2\r\n")
				continue
			}
			n, has := answer(m.fexp[k][f])
			items = append(items, ":"+strconv.Itoa(n)+"\r\n")
			changes = append(changes, func() {
				switch {
				case n == 2:
					m.peerDo("HDEL", k, f)
					delete(m.fexp[k], f)
				case has:
					if m.fexp[k] == nil {
						m.fexp[k] = map[string]bool{}
					}
					m.fexp[k][f] = true
				default:
					delete(m.fexp[k], f)
				}
			})
		}
		want = "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
		apply = func() {
			for _, c := range changes {
				c()
			}
		}
	default:
		want = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
		apply = func() {}
	}
	ours, err := m.ours.do(cmd)
	if err != nil {
		m.fatalf("%q: ours: %v", cmd, err)
	}
	if m.hfeLoose {
		for _, k := range ours.kids {
			if k.head == ":2\r\n" {
				k.head = ":1\r\n"
			}
		}
	}
	if got := normalizeHFE(ours); got != want {
		m.fatalf("%s\n ours  %q\n model %q", short(strings.Join(cmd, " ")), short(got), short(want))
	}
	apply()
}

// normalizeHFE is a reply of integers with every one > 0 but 2 as 1
// (HPTTL's times).
func normalizeHFE(n *replyNode) string {
	for _, k := range n.kids {
		if v, err := strconv.Atoi(strings.TrimSpace(k.head[1:])); err == nil && v > 2 {
			k.head = ":1\r\n"
		}
	}
	return n.String()
}

// peerDo runs a command on the peer alone.
func (m *aggModel) peerDo(args ...string) *replyNode {
	m.t.Helper()
	p, err := m.peer.do(args)
	if err != nil {
		m.fatalf("%q: redis: %v", args, err)
	}
	return p
}

// hfeAfter updates m.fexp after cmd, which both answered reply.
func (m *aggModel) hfeAfter(cmd []string, reply *replyNode) {
	if reply.head[0] == '-' || len(cmd) < 2 {
		return
	}
	k := cmd[1]
	switch strings.ToUpper(cmd[0]) {
	case "HSET": // a field set again loses its expiry (Redis 7.4)
		for i := 2; i+1 < len(cmd); i += 2 {
			delete(m.fexp[k], cmd[i])
		}
	case "HDEL":
		for _, f := range cmd[2:] {
			delete(m.fexp[k], f)
		}
	case "DEL", "UNLINK", "PEXPIREAT", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE", "ZUNIONSTORE", "ZRANGESTORE":
		delete(m.fexp, k) // PEXPIREAT's time is 1: the key is deleted
	case "RENAME", "RENAMENX":
		if cmd[1] != cmd[2] && reply.head != ":0\r\n" {
			m.fexp[cmd[2]] = m.fexp[k]
			delete(m.fexp, k)
		}
	case "COPY":
		if reply.head == ":1\r\n" {
			m.fexp[cmd[2]] = maps.Clone(m.fexp[k])
		}
	}
}

// checkHFE compares the expiry of every field of hash k with the model's.
func (m *aggModel) checkHFE(k string) {
	m.t.Helper()
	keys := m.peerDo("HKEYS", k)
	if len(keys.kids) == 0 {
		if len(m.fexp[k]) != 0 {
			m.fatalf("the model has field expiries of %s, which redis-server lacks: %v", k, m.fexp[k])
		}
		return
	}
	var fields []string
	for _, f := range keys.kids {
		fields = append(fields, strings.TrimSuffix(f.body, "\r\n"))
	}
	m.hfeSame(append([]string{"HPTTL", k, "FIELDS", strconv.Itoa(len(fields))}, fields...), k, fields, func(has bool) (int, bool) {
		if has {
			return 1, true
		}
		return -1, false
	})
}
