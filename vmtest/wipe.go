package vmtest

import (
	"fmt"

	"github.com/tiercache/tiercache/nvmekv/emu/dev"
)

// ZeroSuperblock zeroes the first 4 KiB of the NVM namespace at path (a
// /dev/ngXnY) through NVM passthrough: an emulated store there is then
// formatted afresh by the next Open. Guest suites sharing the cold
// controller (nvme1) call it before and after they use it.
func ZeroSuperblock(path string) error {
	d, err := dev.OpenNVMe(path, dev.NVMeOptions{})
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.WriteAt(make([]byte, 4096), 0); err != nil {
		return fmt.Errorf("vmtest: zero the superblock of %s: %w", path, err)
	}
	return nil
}
