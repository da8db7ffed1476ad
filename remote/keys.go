package remote

import (
	"bytes"
	"encoding/hex"
	"strconv"
)

// The keys the store makes, under Config.Prefix P:
//
//	P + "g"                                   the generation: Clear increments it
//	P + "d" + gen + ":" + user key            a value's record
//	P + "c" + gen + ":" + put ID (hex) + ":" + i   piece i of a chunked value
//
// A user key may hold any bytes; it only ever follows "d<gen>:", so no
// user key makes a generation or chunk key. Each connection tracks the
// data keys and the generation key it read (the default tracking mode,
// doc.go), so another writer's change of a value or of the generation
// reaches every sidecar that holds it.

func (s *Store) genKey() string { return s.cfg.Prefix + "g" }

// dataPrefix is the prefix of every data key of generation gen.
func (s *Store) dataPrefix(gen uint64) string {
	return s.cfg.Prefix + "d" + strconv.FormatUint(gen, 10) + ":"
}

func (s *Store) dataKey(gen uint64, key []byte) string { return s.dataPrefix(gen) + string(key) }

func (s *Store) chunkKey(gen uint64, putID [16]byte, i uint32) string {
	return s.cfg.Prefix + "c" + strconv.FormatUint(gen, 10) + ":" + hex.EncodeToString(putID[:]) + ":" + strconv.FormatUint(uint64(i), 10)
}

// parseDataKey splits a tracked data key into its generation and user key.
func (s *Store) parseDataKey(k string) (gen uint64, key []byte, ok bool) {
	p := s.cfg.Prefix + "d"
	if len(k) < len(p) || k[:len(p)] != p {
		return 0, nil, false
	}
	rest := []byte(k[len(p):])
	i := bytes.IndexByte(rest, ':')
	if i <= 0 {
		return 0, nil, false
	}
	gen, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	if err != nil {
		return 0, nil, false
	}
	return gen, rest[i+1:], true
}

// keyGen is the generation of a data or chunk key of the store's prefix
// (sweep), or false for another key.
func (s *Store) keyGen(k string) (uint64, bool) {
	p := s.cfg.Prefix
	if len(k) < len(p)+2 || k[:len(p)] != p || (k[len(p)] != 'd' && k[len(p)] != 'c') {
		return 0, false
	}
	rest := k[len(p)+1:]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i == len(rest) || rest[i] != ':' {
		return 0, false
	}
	g, err := strconv.ParseUint(rest[:i], 10, 64)
	return g, err == nil
}

// globEscape escapes s for a SCAN MATCH pattern.
func globEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}
