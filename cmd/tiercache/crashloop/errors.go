package crashloop

import "errors"

// ErrNoPong is a sidecar that did not answer PING in time after a start.
var ErrNoPong = errors.New("crashloop: the sidecar did not answer PING within a minute")
