package nsadmin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Record is one namespace this host owns or uses, by name.
type Record struct {
	// Name is the owner's name for it (a tenant's), unique per subsystem.
	Name string `json:"name"`
	// SubNQN is the subsystem the namespace belongs to.
	SubNQN string `json:"subnqn"`
	// ID is the namespace's identity (Namespace.ID: its NGUID, else
	// EUI-64), what finds it again after a restart of either side; NSIDs
	// are not stable.
	ID string `json:"id"`
	// NSID is where it was last seen.
	NSID uint32 `json:"nsid"`
	// Size is the size asked for, in bytes.
	Size uint64 `json:"size"`
	// Created says this host created it (Manager.Ensure): only such a
	// namespace is ever deleted. A claimed one (Manager.Claim) is not.
	Created bool      `json:"created"`
	Time    time.Time `json:"time"`
}

// registryFile is the registry's file:
//
//	{"version": 1, "namespaces": [Record, ...]}
type registryFile struct {
	Version    int      `json:"version"`
	Namespaces []Record `json:"namespaces"`
}

const registryVersion = 1

// registry is the ownership file, loaded under its lock.
type registry struct {
	path   string
	unlock func()
	recs   []Record
}

// lockRegistry takes the registry's lock (path + ".lock", flock: one
// process at a time, the sidecar and `tiercache ns` alike) and loads it;
// a missing file is empty. The caller must call r.unlock.
func lockRegistry(path string) (*registry, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no registry path", ErrRegistry)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRegistry, err)
	}
	unlock, err := flockFile(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("%w: lock %s.lock: %w", ErrRegistry, path, err)
	}
	r := &registry{path: path, unlock: unlock}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return r, nil
	case err != nil:
		unlock()
		return nil, fmt.Errorf("%w: %w", ErrRegistry, err)
	}
	var f registryFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != registryVersion {
		unlock()
		return nil, fmt.Errorf("%w: %s is not a version %d registry (%v); nothing was changed", ErrRegistry, path, registryVersion, err)
	}
	r.recs = f.Namespaces
	return r, nil
}

func (r *registry) find(pred func(*Record) bool) *Record {
	if i := slices.IndexFunc(r.recs, func(x Record) bool { return pred(&x) }); i >= 0 {
		return &r.recs[i]
	}
	return nil
}

func (r *registry) byName(subNQN, name string) *Record {
	return r.find(func(x *Record) bool { return x.SubNQN == subNQN && x.Name == name })
}

func (r *registry) byID(subNQN, id string) *Record {
	return r.find(func(x *Record) bool { return x.SubNQN == subNQN && x.ID == id })
}

func (r *registry) remove(subNQN, name string) {
	r.recs = slices.DeleteFunc(r.recs, func(x Record) bool { return x.SubNQN == subNQN && x.Name == name })
}

// save writes the registry: a temporary file beside it, synced, renamed
// over it, so a crash leaves the old registry or the new one.
func (r *registry) save() error {
	b, err := json.MarshalIndent(registryFile{Version: registryVersion, Namespaces: r.recs}, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.path + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
	}
	if err == nil {
		err = os.Rename(tmp, r.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: write %s: %w", ErrRegistry, r.path, err)
	}
	syncDir(filepath.Dir(r.path))
	return nil
}
