package dev

import (
	"errors"
	"fmt"

	"github.com/tiercache/tiercache/nvmekv"
)

// Geometry is what Identify says about a namespace.
type Geometry struct {
	CSI            uint8  // command set (Identify CNS 03h descriptor; 0 = NVM)
	BlockBytes     int    // logical block size of the LBA format in use
	Metadata       uint16 // metadata bytes per block of that format (MS)
	Extended       bool   // FLBAS bit 4: metadata at the end of each block's data
	PIType         uint8  // DPS bits 2:0: protection information type enabled (0 = none)
	WriteProtected bool   // NSATTR bit 0
	LBAF           int    // LBA format index in use
	NLBAF          int    // LBA formats the namespace reports (NLBAF + 1)
	Blocks         uint64 // NSZE
	MDTS           uint8  // Identify Controller MDTS
	// From Identify CNS 05h/CSI 00h, when the controller reports extended
	// LBA formats (CTRATT bit 15): the format in use's Storage Tag Size
	// and guard format (ELBAF). ELBAF false: not reported.
	ELBAF      bool
	StorageTag int // ELBAF STS: storage tag bits
	Guard      int // ELBAF PIF: 0 16-bit, 1 32-bit, 2 64-bit guard
	// From Identify CNS 06h/CSI 00h: Dataset Management limits (0 = none
	// reported): ranges per command, blocks per range, blocks per command.
	DMRL  uint8
	DMRSL uint32
	DMSL  uint64
}

// CheckGeometry refuses a namespace this backend cannot drive, with an
// error naming the device and the reason (errors.Is(err, ErrNotNVM)). The
// log's records carry their own CRC and the backend sends no metadata
// buffer, so every format whose blocks carry metadata (or protection
// information, or a storage tag in it) is refused, and so is a namespace
// it cannot write.
func CheckGeometry(path string, g Geometry) error {
	switch {
	case g.CSI != nvmekv.CSINVM:
		return fmt.Errorf("%w: %s has command set identifier %d, not 0 (NVM): NVM Read and Write would mean something else there", ErrNotNVM, path, g.CSI)
	case g.NLBAF > 0 && g.LBAF >= g.NLBAF:
		return fmt.Errorf("%w: %s says LBA format %d is in use but reports %d formats", ErrNotNVM, path, g.LBAF, g.NLBAF)
	case g.Metadata != 0:
		kind := "in a separate buffer"
		if g.Extended {
			kind = "at the end of each block (extended LBA)"
		}
		return fmt.Errorf("%w: %s uses LBA format %d with %d metadata bytes per block, transferred %s; only formats without metadata are handled (reformat with ms=0, e.g. nvme format --lbaf)", ErrNotNVM, path, g.LBAF, g.Metadata, kind)
	case g.PIType != 0:
		return fmt.Errorf("%w: %s has end-to-end protection information type %d enabled (DPS); only formats without protection information are handled", ErrNotNVM, path, g.PIType)
	case g.ELBAF && g.StorageTag != 0:
		return fmt.Errorf("%w: %s uses LBA format %d with a %d-bit storage tag (Identify CNS 05h ELBAF); only formats without one are handled", ErrNotNVM, path, g.LBAF, g.StorageTag)
	case g.BlockBytes < 512 || g.BlockBytes > blockBytes || g.BlockBytes&(g.BlockBytes-1) != 0:
		return fmt.Errorf("%w: %s has %d-byte logical blocks; 512..4096 are handled", ErrNotNVM, path, g.BlockBytes)
	case g.Blocks == 0:
		return fmt.Errorf("%w: %s has no blocks (NSZE 0)", ErrNotNVM, path)
	case g.WriteProtected:
		return fmt.Errorf("%w: %s is write protected (NSATTR bit 0); the log writes to it", ErrNotNVM, path)
	}
	return nil
}

// maxTransfer is the largest transfer in bytes: MDTS (2^MDTS units of the
// controller's minimum page size, CAP.MPSMIN, which userspace cannot read:
// 4 KiB assumed, NVMe Base Specification, Identify Controller) bounded by
// the block layer's limits the driver set for the namespace
// (max_hw_sectors_kb, and max_segments pages since the buffers are not
// physically contiguous), and by maxCap.
func maxTransfer(mdts uint8, hwKB, segs int) int {
	const maxCap = 1 << 20
	n := maxCap
	if mdts > 0 && mdts < 20 {
		n = min(n, blockBytes<<mdts)
	}
	if hwKB > 0 {
		n = min(n, hwKB<<10)
	}
	if segs > 0 {
		n = min(n, segs*blockBytes)
	} else {
		n = min(n, 128*blockBytes) // NVME_MAX_SEGS of drivers/nvme/host/pci.c
	}
	return max(blockBytes, n&^(blockBytes-1))
}

// readGeometry reads what CheckGeometry judges, with Identify through the
// admin ioctl: the command set (descriptor list, CNS 03h); then, for an
// NVM namespace, the namespace (CNS 00h: size, LBA format in use, its
// metadata, protection, write protection, DLFEAT), the controller (CNS
// 01h: MDTS, ONCS, CTRATT), the NVM command set's namespace data (CNS
// 05h/CSI 00h: the format's extended LBA format, when CTRATT says the
// controller has them) and controller data (CNS 06h/CSI 00h: Dataset
// Management limits; a controller that predates it answers with an error
// status, and no limits are assumed). It returns as soon as the CSI is not
// NVM: the other structures mean something else there.
func readGeometry(fd int, nsid uint32, path string) (g Geometry, dlfeat uint8, oncs uint16, err error) {
	if g.CSI, err = nvmekv.ReadCSI(fd, nsid); err != nil || g.CSI != nvmekv.CSINVM {
		if err != nil {
			err = fmt.Errorf("dev: read the command set of %s: %w", path, err)
		}
		return g, 0, 0, err
	}
	buf := make([]byte, nvmekv.IdentifyBytes)
	if err := nvmekv.AdminIdentify(fd, nvmekv.EncodeIdentify(nsid, nvmekv.CNSNamespace, 0, 0), buf); err != nil {
		return g, 0, 0, fmt.Errorf("dev: identify namespace %d of %s: %w", nsid, path, err)
	}
	ns, err := nvmekv.ParseNVMNamespace(buf)
	if err != nil {
		return g, 0, 0, fmt.Errorf("dev: %s: %w", path, err)
	}
	g.BlockBytes, g.Metadata, g.LBAF, g.NLBAF, g.Blocks = int(ns.BlockBytes), ns.MetadataBytes, ns.LBAF, int(ns.NLBAF)+1, ns.NSZE
	g.Extended, g.PIType, g.WriteProtected = ns.ExtendedLBA(), ns.DPS&0x7, ns.WriteProtected()
	if err := nvmekv.AdminIdentify(fd, nvmekv.EncodeIdentify(0, nvmekv.CNSController, 0, 0), buf); err != nil {
		return g, 0, 0, fmt.Errorf("dev: identify the controller of %s: %w", path, err)
	}
	ctrl, err := nvmekv.ParseController(buf)
	if err != nil {
		return g, 0, 0, fmt.Errorf("dev: %s: %w", path, err)
	}
	g.MDTS = ctrl.MDTS
	if ctrl.CTRATT&nvmekv.CtrattELBAS != 0 {
		if err := nvmekv.AdminIdentify(fd, nvmekv.EncodeIdentify(nsid, nvmekv.CNSIOCSNamespace, 0, nvmekv.CSINVM), buf); err != nil {
			return g, 0, 0, fmt.Errorf("dev: identify the NVM command set data of namespace %d of %s (CNS 05h): %w", nsid, path, err)
		}
		nvm, err := nvmekv.ParseNVMNamespaceIOCS(buf)
		if err != nil {
			return g, 0, 0, fmt.Errorf("dev: %s: %w", path, err)
		}
		g.ELBAF, g.StorageTag, g.Guard = true, nvm.StorageTagBits(g.LBAF), nvm.GuardFormat(g.LBAF)
	}
	err = nvmekv.AdminIdentify(fd, nvmekv.EncodeIdentify(0, nvmekv.CNSIOCSController, 0, nvmekv.CSINVM), buf)
	var se *nvmekv.StatusError
	switch {
	case err == nil:
		c, perr := nvmekv.ParseNVMControllerIOCS(buf)
		if perr != nil {
			return g, 0, 0, fmt.Errorf("dev: %s: %w", path, perr)
		}
		g.DMRL, g.DMRSL, g.DMSL = c.DMRL, c.DMRSL, c.DMSL
	case !errors.As(err, &se):
		return g, 0, 0, fmt.Errorf("dev: identify the NVM command set data of the controller of %s (CNS 06h): %w", path, err)
	}
	return g, ns.DLFEAT, ctrl.ONCS, nil
}
