package coldstore

import "errors"

var (
	// ErrInvalidConfig is wrapped by every Config.Validate failure.
	ErrInvalidConfig = errors.New("coldstore: invalid config")
	// ErrBadFloor: the store's flush floor record (tier T14) is not one;
	// the store was written by something else.
	ErrBadFloor = errors.New("coldstore: bad flush floor record")
	// ErrHidesExpired: New was given a KV that hides records past their
	// expiry (CS1).
	ErrHidesExpired = errors.New("coldstore: the KV must be opened with nvmekv.KVOptions.KeepExpired: the tier decides expiry")
	// errNoKeyspace: the store cannot count or walk its user keys.
	errNoKeyspace = errors.New("coldstore: the cold store cannot count or list its user keys")
)

var (
	// ErrBadTenantRecord: a namespace's tenant record is not one.
	ErrBadTenantRecord = errors.New("coldstore: bad tenant record")
	// ErrTenantMismatch: the configuration does not match the tenant
	// namespaces the device holds; nothing was changed.
	ErrTenantMismatch = errors.New("coldstore: the tenants' configuration does not match the device")
	// ErrNoTenantNamespace: DropTenant found no namespace of that name.
	ErrNoTenantNamespace = errors.New("coldstore: no tenant namespace")
)

// ErrInUse: a running store holds the tenant namespaces DropTenant was
// asked to change.
var ErrInUse = errors.New("coldstore: in use")
