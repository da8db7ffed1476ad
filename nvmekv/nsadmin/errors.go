package nsadmin

import "errors"

var (
	// ErrNoManagement: the controller does not support Namespace
	// Management and Attachment (Identify Controller OACS bit 3 clear, or
	// it answered Invalid Opcode).
	ErrNoManagement = errors.New("nsadmin: the controller does not support Namespace Management")
	// ErrCapacity: the size asked is more than the unallocated capacity.
	ErrCapacity = errors.New("nsadmin: not enough unallocated capacity")
	// ErrCommandSet: the namespace (or the command set asked for) is not
	// the KV command set.
	ErrCommandSet = errors.New("nsadmin: not a KV namespace")
	// ErrNotFound: no such namespace on the controller.
	ErrNotFound = errors.New("nsadmin: namespace not found")
	// ErrNotOwned: the namespace was not created through this registry; it
	// is never deleted.
	ErrNotOwned = errors.New("nsadmin: namespace not created by this host")
	// ErrClaimed: the name or the namespace is already recorded for
	// another owner.
	ErrClaimed = errors.New("nsadmin: already claimed")
	// ErrMismatch: a recorded namespace no longer matches what is asked
	// (its size) or what the device has (another command set).
	ErrMismatch = errors.New("nsadmin: the namespace does not match its record")
	// ErrNoDevice: the namespace's /dev/ngXnY did not appear, or the
	// controller is not a kernel one.
	ErrNoDevice = errors.New("nsadmin: no device node")
	// ErrRegistry: the ownership file is unreadable or locked.
	ErrRegistry = errors.New("nsadmin: namespace registry")
)
