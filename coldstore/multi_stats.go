package coldstore

import "github.com/tiercache/tiercache/backend"

// Stats adds the spaces' figures up, and gives each tenant its row
// (backend.Stats.Tenants): its namespace's figures when it has one of its
// own, its reads and writes wherever its keys go. The default tenant's
// row has the default namespace's figures, which every tenant without a
// namespace of its own shares.
func (m *Multi) Stats() backend.Stats {
	per := make([]backend.Stats, len(m.spaces))
	cs := backend.Stats{Backend: m.where, Strict: true, IndexNode: -1, IndexPlacement: -1}
	for i, s := range m.spaces {
		st := s.st.Stats()
		per[i] = st
		if i == 0 {
			cs.MaxValue, cs.IndexNode, cs.IndexPlacement = st.MaxValue, st.IndexNode, st.IndexPlacement
		}
		if st.Items < 0 || cs.Items < 0 {
			cs.Items = -1
		} else {
			cs.Items += st.Items
		}
		cs.FreeBytes += st.FreeBytes
		cs.BytesRead += st.BytesRead
		cs.BytesWritten += st.BytesWritten
		cs.Submissions += st.Submissions
		cs.Evictions += st.Evictions
		cs.PreExisting = cs.PreExisting || st.PreExisting
		cs.Strict = cs.Strict && st.Strict
		cs.StalledIO += st.StalledIO
		cs.OldestIO = max(cs.OldestIO, st.OldestIO)
		if cs.WriteError == nil {
			cs.WriteError = st.WriteError
		}
		cs.IndexBytes += st.IndexBytes
		cs.IndexBoundBytes += st.IndexBoundBytes
		cs.IndexBindErrors += st.IndexBindErrors
	}
	cs.Tenants = make([]backend.TenantStats, len(m.rows))
	for i, r := range m.rows {
		t := backend.TenantStats{Name: r.name, Keys: -1, Reads: r.reads.Load(), Writes: r.writes.Load()}
		s := m.spaces[r.sp]
		switch {
		case r.kind == "shared" && i != 0:
			t.Namespace = "shared"
		default:
			t.Namespace = r.kind + ":" + s.where
			if r.kind == "shared" {
				t.Namespace = "default:" + s.where
			}
			fill(&t, s, per[r.sp])
		}
		cs.Tenants[i] = t
	}
	return cs
}

// fill sets t's namespace figures from space s, whose Stats are st.
func fill(t *backend.TenantStats, s *space, st backend.Stats) {
	if n, ok := s.st.UserKeys(); ok {
		t.Keys = n
	}
	t.Evictions, t.DeviceRead, t.DeviceWritten = st.Evictions, st.BytesRead, st.BytesWritten
	lim := s.st.kv.Namespace().Limits()
	t.Bytes, t.Capacity = lim.Utilization, lim.Capacity
}
