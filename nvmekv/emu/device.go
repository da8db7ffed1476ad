package emu

import (
	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// openDevice opens the namespace's storage: Options.Device if set, else
// Path as an NVM namespace (Options.NVMe) or as a file or block device;
// wrapped in a dev.Fault when Options.Fault is set.
func openDevice(o *Options) (dev.Device, error) {
	var d dev.Device
	switch {
	case o.Device != nil:
		d = o.Device
	case o.NVMe:
		n, err := dev.OpenNVMe(o.Path, dev.NVMeOptions{Logger: o.Logger})
		if err != nil {
			return nil, err
		}
		d = n
	default:
		f, err := dev.OpenFile(o.Path)
		if err != nil {
			return nil, err
		}
		d = f
	}
	if fn := o.Fault; fn != nil {
		d = dev.NewFault(d, func(op dev.Op, off int64, n int) (int32, bool) {
			if op != dev.OpRead && op != dev.OpWrite {
				return 0, false
			}
			en := fn(op == dev.OpWrite, off, n)
			return -int32(en), en != 0
		})
	}
	return d, nil
}
