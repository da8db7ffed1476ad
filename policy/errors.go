package policy

import "errors"

// ErrInvalidOptions is wrapped by every Options.Validate failure.
var ErrInvalidOptions = errors.New("policy: invalid options")
