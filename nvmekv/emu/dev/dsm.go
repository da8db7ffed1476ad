package dev

import (
	"fmt"

	"github.com/tiercache/tiercache/nvmekv"
)

// dsmRange is one Dataset Management range: nlb blocks from slba.
type dsmRange struct {
	slba uint64
	nlb  uint32
}

// maxDSMRanges is the most ranges one Dataset Management command carries
// (NR is 8 bits, 0's based: NVM Command Set Specification, Dataset
// Management command).
const maxDSMRanges = 256

// dsmCommands splits nlb blocks from slba into Dataset Management
// commands: each range at most DMRSL blocks (and 2^32-1, the field's
// width), each command at most DMRL ranges (and 256) and DMSL blocks in
// all, as the controller's NVM command set Identify data says (0: no
// limit reported). Linux splits discards by the same limits
// (drivers/nvme/host/core.c nvme_init_non_mdts_limits, nvme_config_discard).
func dsmCommands(slba, nlb uint64, g Geometry) [][]dsmRange {
	perRange := uint64(1<<32 - 1)
	if g.DMRSL > 0 {
		perRange = uint64(g.DMRSL)
	}
	perCmd := maxDSMRanges
	if g.DMRL > 0 {
		perCmd = min(perCmd, int(g.DMRL))
	}
	var cmds [][]dsmRange
	var cur []dsmRange
	var curBlocks uint64
	for nlb > 0 {
		n := min(nlb, perRange)
		if g.DMSL > 0 {
			if curBlocks >= g.DMSL {
				cmds, cur, curBlocks = append(cmds, cur), nil, 0
			}
			n = min(n, g.DMSL-curBlocks)
		}
		cur = append(cur, dsmRange{slba, uint32(n)})
		curBlocks += n
		slba, nlb = slba+n, nlb-n
		if len(cur) == perCmd {
			cmds, cur, curBlocks = append(cmds, cur), nil, 0
		}
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// Deallocate sends Dataset Management with the Deallocate attribute for
// the blocks of [off, off+n), in as many commands and ranges as the
// controller's limits ask (dsmCommands); nothing when the controller lacks
// Dataset Management (ONCS bit 2).
func (d *NVMe) Deallocate(off, n int64) error {
	if !d.dsm || n == 0 {
		return nil
	}
	if off%int64(d.lba) != 0 || n%int64(d.lba) != 0 || off < 0 || off+n > d.size {
		d.refused.Add(1)
		return fmt.Errorf("%w: deallocate %d bytes at offset %d of %s (%d-byte blocks, %d bytes)", ErrUnaligned, n, off, d.path, d.lba, d.size)
	}
	buf := make([]byte, maxDSMRanges*nvmekv.DSMRangeBytes)
	for _, rs := range dsmCommands(uint64(off/int64(d.lba)), uint64(n/int64(d.lba)), d.g) {
		for i, r := range rs {
			nvmekv.PutDSMRange(buf, i, r.slba, r.nlb)
		}
		if err := nvmekv.IOCommand(d.fd, nvmekv.EncodeDSMDeallocate(d.nsid, len(rs)), buf[:len(rs)*nvmekv.DSMRangeBytes]); err != nil {
			return fmt.Errorf("dev: NVM Dataset Management (deallocate) of %d bytes at %d of %s: %w", n, off, d.path, err)
		}
	}
	return nil
}

// Geometry is what Identify said about the namespace at OpenNVMe.
func (d *NVMe) Geometry() Geometry { return d.g }
