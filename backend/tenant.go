package backend

// Tenant is one of the tier's tenants as a store sees it (Params.Tenants):
// a name and the prefix that selects its keys. A store may give a tenant
// a namespace of its own (coldstore: its cold_bytes) and route its keys
// there; it keeps per-tenant figures either way (Stats.Tenants).
type Tenant struct {
	Name   string
	Prefix string
}

// TenantStats are one tenant's figures in a store (Stats.Tenants). A field
// a store cannot tell is zero (Keys -1).
type TenantStats struct {
	// Name is the tenant's ("default" for the keys no prefix selects).
	Name string
	// Namespace is where its keys are: "own:<where>" for a namespace of
	// its own, "shared" for the default namespace (its figures are then
	// the default tenant's row), "kept:<where>" for the namespace of a
	// tenant no longer configured (its keys still go there: coldstore CS8).
	Namespace string
	// Keys are the user keys its namespace holds (-1: unknown, as on a
	// shared namespace or a KV SSD); Bytes the namespace's bytes in use,
	// Capacity its size.
	Keys            int64
	Bytes, Capacity uint64
	// Reads and Writes count the tenant's keys looked up and written
	// (puts) in the store, whatever its namespace.
	Reads, Writes uint64
	// Evictions are the records its namespace dropped to make room (an
	// emulated namespace's reclaim; a chunked value counts once a chunk).
	Evictions uint64
	// DeviceRead, DeviceWritten are the bytes its namespace moved to and
	// from the device.
	DeviceRead, DeviceWritten uint64
}
