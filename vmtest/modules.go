package vmtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NVMeModules are the kernel modules the guest loads to get /dev/nvme0 and
// /dev/ng0n1 on the Debian kernel (names and load order: docs/DESIGN.md
// §13).
// Their modules.dep dependencies are added and ordered automatically.
var NVMeModules = []string{
	"crct10dif_common", "crc64", "crc-t10dif", "crc64-rocksoft", "t10-pi", "nvme-core", "nvme",
}

// SoftModules are the NVMeModules (and ThinModules' crc32c_generic) that a
// kernel may build in or not have at all. The protection-information code
// asks for its CRCs by name through the crypto API (block/t10-pi.c), so
// modules.dep does not list them, and their packaging changed between
// kernels: Debian's 6.1 ships t10-pi and the CRCs as modules, while 6.12
// builds t10-pi into the block layer with CONFIG_BLK_DEV_INTEGRITY, and a
// built-in object that can never be a module is not named in
// modules.builtin either. ResolveModules loads a soft module when
// modules.dep has it and otherwise leaves it out; every other name must
// resolve.
var SoftModules = map[string]bool{
	"crct10dif_common": true, "crc64": true, "crc_t10dif": true, "crc64_rocksoft": true, "t10_pi": true,
	"crc32c_generic": true,
}

// FaultModules are the loop and device-mapper modules the guest loads for
// the fault tests (vmtest/guest/sidecar TestSidecarColdDeviceFaults): a
// loop device under a dm-linear, dm-flakey or dm-error table (the error
// target is part of dm-mod).
var FaultModules = []string{"loop", "dm-mod", "dm-flakey"}

// ThinModules are the device-mapper thin-provisioning modules the guest
// loads for a block device that runs out of space
// (vmtest/guest/sidecar TestSidecarColdDeviceFull: a thin device whose
// pool is smaller than it, with error_if_no_space). dm-thin-pool's CRC
// comes from libcrc32c, which asks the crypto API for "crc32c" by name
// (lib/libcrc32c.c): crc32c_generic provides it, and modules.dep does not
// list it.
var ThinModules = []string{"crc32c_generic", "dm-thin-pool"}

// TCPModules are the NVMe over Fabrics host modules the guest loads for
// the KV SSD over NVMe/TCP (vmtest/guest/kvtcp): nvme-fabrics makes
// /dev/nvme-fabrics, nvme-tcp is the TCP transport
// (drivers/nvme/host/fabrics.c, tcp.c).
var TCPModules = []string{"nvme-fabrics", "nvme-tcp"}

// GuestModules are the modules a guest run loads by default.
var GuestModules = append(append(append(append([]string{}, NVMeModules...), FaultModules...), ThinModules...), TCPModules...)

// Module is one kernel module to load in the guest.
type Module struct {
	Name string // canonical name: '-' replaced by '_' as the kernel does
	Path string // absolute path on the host (may be .ko, .ko.xz, .ko.zst, .ko.gz)
}

// ModuleName canonicalises a module name or file name: "nvme-core.ko.xz"
// and "nvme_core" both give "nvme_core".
func ModuleName(s string) string {
	s = filepath.Base(s)
	if i := strings.Index(s, ".ko"); i >= 0 {
		s = s[:i]
	}
	return strings.ReplaceAll(s, "-", "_")
}

// ResolveModules reads dir/modules.dep (dir is /lib/modules/<version>) and
// returns the named modules plus all their dependencies, each once, every
// module after all of its dependencies. Names listed in modules.builtin are
// built into the kernel and left out, and so are SoftModules the kernel
// does not ship.
func ResolveModules(dir string, names []string) ([]Module, error) {
	deps, err := readModulesDep(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	builtin := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, l := range strings.Fields(string(b)) {
			builtin[ModuleName(l)] = true
		}
	}
	byName := map[string]string{} // canonical name -> relative path
	for rel := range deps {
		byName[ModuleName(rel)] = rel
	}
	var out []Module
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		switch state[name] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("vmtest: modules.dep has a dependency cycle: %s", strings.Join(append(chain, name), " -> "))
		}
		rel, ok := byName[name]
		if !ok {
			if builtin[name] || SoftModules[name] {
				state[name] = 2
				return nil
			}
			return fmt.Errorf("%w: %s is neither in %s/modules.dep nor built in", ErrModuleNotFound, name, dir)
		}
		state[name] = 1
		// modules.dep lists the full closure; visiting each entry keeps the
		// order right whatever order the file uses.
		for _, d := range deps[rel] {
			if err := visit(ModuleName(d), append(chain, name)); err != nil {
				return err
			}
		}
		state[name] = 2
		out = append(out, Module{Name: name, Path: filepath.Join(dir, rel)})
		return nil
	}
	for _, n := range names {
		if err := visit(ModuleName(n), nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readModulesDep(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vmtest: read modules.dep: %w", err)
	}
	defer f.Close()
	deps := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		mod, rest, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("vmtest: %s line %d has no ':': %q", path, n, line)
		}
		deps[strings.TrimSpace(mod)] = strings.Fields(rest)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vmtest: read %s: %w", path, err)
	}
	return deps, nil
}

// ReadModule returns the uncompressed ELF object of a module. Debian's 6.1
// kernel ships plain .ko files and is built without CONFIG_MODULE_DECOMPRESS
// (checked in the guest: finit_module with MODULE_INIT_COMPRESSED_FILE
// fails with EOPNOTSUPP there):
// compressed modules are therefore decompressed on the host, .gz in Go,
// .xz and .zst with the xz or zstd tool.
func ReadModule(path string) ([]byte, error) {
	var (
		data []byte
		err  error
	)
	switch {
	case strings.HasSuffix(path, ".ko"):
		data, err = os.ReadFile(path)
	case strings.HasSuffix(path, ".ko.gz"):
		var f *os.File
		if f, err = os.Open(path); err == nil {
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(f); err == nil {
				data, err = io.ReadAll(zr)
			}
			f.Close()
		}
	case strings.HasSuffix(path, ".ko.xz"):
		data, err = runTool("xz", "-dc", path)
	case strings.HasSuffix(path, ".ko.zst"):
		data, err = runTool("zstd", "-dc", path)
	default:
		return nil, fmt.Errorf("vmtest: module %s has an unknown compression suffix", path)
	}
	if err != nil {
		return nil, fmt.Errorf("vmtest: read module %s: %w", path, err)
	}
	if !bytes.HasPrefix(data, []byte("\x7fELF")) {
		return nil, fmt.Errorf("vmtest: module %s is not an ELF object after decompression", path)
	}
	return data, nil
}

// ModuleForGuest returns what to pack for module path: the decompressed
// object (ReadModule), or, when that fails for a compressed module and the
// guest kernel's config (kconfig, the text of /boot/config-<version>; ""
// if unknown) has CONFIG_MODULE_DECOMPRESS=y, the compressed file itself,
// to be loaded with ModuleInitCompressedFile.
func ModuleForGuest(path, kconfig string) (data []byte, compressed bool, err error) {
	data, err = ReadModule(path)
	if err == nil || strings.HasSuffix(path, ".ko") {
		return data, false, err
	}
	if !strings.Contains(kconfig, "\nCONFIG_MODULE_DECOMPRESS=y") {
		return nil, false, err
	}
	raw, rerr := os.ReadFile(path)
	if rerr != nil {
		return nil, false, fmt.Errorf("vmtest: read module %s: %w", path, rerr)
	}
	return raw, true, nil
}

func runTool(name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
