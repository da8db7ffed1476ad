package crashloop

import "errors"

// Sentinel errors; callers match them with errors.Is.
var (
	// ErrNoPong is a sidecar that did not answer, its cache open (Ready),
	// within a minute of a start.
	ErrNoPong = errors.New("crashloop: the sidecar did not answer with its cache open within a minute")
	// ErrLoading is Ready's answer while the server is loading its dataset.
	ErrLoading = errors.New("crashloop: the server is loading its dataset (INFO loading:1)")
)
