package tier

import (
	"fmt"
	"path/filepath"
)

// ColdConfig configures the built-in cold tier.
type ColdConfig struct {
	// ColdMode is "emulated" (the nvmekv emulated namespace on a file or
	// block device), "passthrough" (a KV SSD at ColdDevice) or "none".
	// Default: "emulated" when DataDir or ColdPath is set, else "none".
	ColdMode string
	// DataDir holds the emulated store (ColdPath defaults to DataDir/cold.kv).
	DataDir string
	// ColdPath is the emulated store's file or block device.
	ColdPath string
	// ColdDevice is the passthrough char device (/dev/ngXnY).
	ColdDevice string
	// ColdCapacity is the emulated store's size in bytes (default 1 GiB; a
	// block device's own size when 0 and ColdPath is a device).
	ColdCapacity int64
}

func (c *ColdConfig) ensureDefaults() {
	if c.ColdMode == "" {
		if c.DataDir != "" || c.ColdPath != "" {
			c.ColdMode = "emulated"
		} else {
			c.ColdMode = "none"
		}
	}
	if c.ColdMode == "emulated" && c.ColdPath == "" && c.DataDir != "" {
		c.ColdPath = filepath.Join(c.DataDir, "cold.kv")
	}
}

func (c *ColdConfig) enabled() bool { return c.ColdMode == "emulated" || c.ColdMode == "passthrough" }

func (c *ColdConfig) validate() []error {
	var errs []error
	switch c.ColdMode {
	case "emulated":
		if c.ColdPath == "" {
			errs = append(errs, fmt.Errorf("%w: ColdMode emulated needs DataDir or ColdPath", ErrInvalidOptions))
		}
	case "passthrough":
		if c.ColdDevice == "" {
			errs = append(errs, fmt.Errorf("%w: ColdMode passthrough needs ColdDevice", ErrInvalidOptions))
		}
	case "none":
	default:
		errs = append(errs, fmt.Errorf("%w: ColdMode %q is not emulated, passthrough or none", ErrInvalidOptions, c.ColdMode))
	}
	if c.ColdCapacity < 0 {
		errs = append(errs, fmt.Errorf("%w: ColdCapacity %d must not be negative", ErrInvalidOptions, c.ColdCapacity))
	}
	return errs
}

// openCold opens the built-in cold tier.
func (o *Options) openCold() (Cold, error) {
	return nil, fmt.Errorf("tier: cold mode %q is not available yet", o.ColdMode)
}
