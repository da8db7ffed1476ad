package tcptarget

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// stateVersion is the format of the namespace table file.
const stateVersion = 1

// state is the namespace table as kept in NamespaceOptions.StatePath:
//
//	{"version": 1, "nqn": "...", "capacity": N,
//	 "namespaces": [{"nsid": 1, "size": N, "nguid": "32 hex digits",
//	                 "uuid": "32 hex digits", "hosts": ["host NQN"]}]}
//
// The capacity is informational (the target's option rules); a table
// whose namespaces need more than the option is refused at start.
type state struct {
	Version    int        `json:"version"`
	NQN        string     `json:"nqn"`
	Capacity   int64      `json:"capacity"`
	Namespaces []nsRecord `json:"namespaces"`
}

// nsRecord is one namespace: its NSID, size in bytes, identifiers and the
// host NQNs whose controllers it is attached to.
type nsRecord struct {
	NSID     uint32   `json:"nsid"`
	Size     int64    `json:"size"`
	NGUID    hexID16  `json:"nguid"`
	UUID     hexID16  `json:"uuid"`
	Hosts    []string `json:"hosts,omitempty"`
	AllHosts bool     `json:"-"` // the fixed namespace
}

func (r nsRecord) clone() nsRecord {
	r.Hosts = slices.Clone(r.Hosts)
	return r
}

// hexID16 is a 16-byte identifier written as 32 hex digits.
type hexID16 [16]byte

func (h hexID16) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(h[:])), nil }

func (h *hexID16) UnmarshalText(b []byte) error {
	if n, err := hex.Decode(h[:], b); err != nil || n != len(h) {
		return fmt.Errorf("want 32 hex digits, got %q", b)
	}
	return nil
}

// loadState reads the table; a missing file is an empty table.
func loadState(path string) (*state, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &state{Version: stateVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tcptarget: read the namespace table: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrState, path, err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("%w: %s has version %d, this target reads %d", ErrState, path, st.Version, stateVersion)
	}
	return &st, nil
}

// saveState replaces the file at path with st: a temporary file in the
// same directory, synced, renamed over it, and the directory synced, so a
// crash leaves the old table or the new one.
func saveState(path string, st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".namespaces-*")
	if err != nil {
		return fmt.Errorf("tcptarget: write the namespace table: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("tcptarget: write the namespace table %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
