package script

import (
	"bytes"
	"strings"
)

// Flags are a script's shebang flags (Redis 7.0 eval.c,
// evalExtractShebangFlags, and script.c scripts_flags_def).
type Flags uint8

const (
	// FlagCompat: no shebang, the EVAL compatibility mode of Redis 6
	// scripts (a script may write; EVAL_RO refuses writes by command).
	FlagCompat Flags = 1 << iota
	// FlagNoWrites: #!lua flags=no-writes; the script is read-only.
	FlagNoWrites
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
)

var flagNames = []struct {
	name string
	flag Flags
}{
	{"no-writes", FlagNoWrites},
	{"allow-oom", FlagAllowOOM},
	{"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster},
	{"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// parseShebang reads body's "#!lua flags=..." line, if any, and returns the
// flags and the length of the line (kept out of the compiled chunk, its
// line feed kept so line numbers stay the user's).
func parseShebang(body []byte) (Flags, int, error) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return FlagCompat, 0, nil
	}
	end := bytes.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, &ReplyError{Msg: "ERR Invalid script shebang", Err: ErrShebang}
	}
	parts := strings.Fields(string(body[:end]))
	if len(parts) == 0 {
		return 0, 0, &ReplyError{Msg: "ERR Invalid engine in script shebang", Err: ErrShebang}
	}
	if parts[0] != "#!lua" {
		return 0, 0, &ReplyError{Msg: "ERR Unexpected engine in script shebang: " + parts[0], Err: ErrShebang}
	}
	var f Flags
	for _, p := range parts[1:] {
		v, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, &ReplyError{Msg: "ERR Unknown lua shebang option: " + p, Err: ErrShebang}
		}
		if v == "" {
			continue
		}
		for _, name := range strings.Split(v, ",") {
			found := false
			for _, fn := range flagNames {
				if fn.name == name {
					f |= fn.flag
					found = true
				}
			}
			if !found {
				return 0, 0, &ReplyError{Msg: "ERR Unexpected flag in script shebang: " + name, Err: ErrShebang}
			}
		}
	}
	return f, end, nil
}

// ShebangFlags reads the flags body's shebang declares without compiling
// it, as Redis 7.0's evalGetCommandFlags does for a script not in its
// cache (evalExtractShebangFlags); ok is false for a bad shebang.
func ShebangFlags(body []byte) (f Flags, ok bool) {
	f, _, err := parseShebang(body)
	return f, err == nil
}
