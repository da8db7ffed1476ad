package tier

import "github.com/tiercache/tiercache/backend"

// coldKeyspace returns cold's keyspace if it can count and walk its user
// keys (the emulated store, T37), else nil.
func coldKeyspace(cold backend.Store) backend.Keyspace {
	ks, ok := cold.(backend.Keyspace)
	if !ok {
		return nil
	}
	if _, ok := ks.UserKeys(); !ok {
		return nil
	}
	return ks
}
