package vmtest

import (
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// DefaultHostPrograms are host executables packed into the guest with the
// shared libraries they load, at the same paths, their path in
// $TIERCACHE_BIN_<NAME>: Debian's nvme-cli, which the guest tests compare
// tiercache's view of a KV SSD with (vmtest/guest/kvtcp).
var DefaultHostPrograms = []string{"/usr/sbin/nvme"}

// libDirs are where the host's dynamic loader finds libraries (Debian's
// multiarch layout; ld.so(8) default paths).
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// HostProgramFiles returns the files a dynamically linked host executable
// needs in the guest: itself, its ELF interpreter (PT_INTERP) and every
// DT_NEEDED library, transitively, found in libDirs. Each is a guest path
// and the host file to copy (symbolic links followed).
func HostProgramFiles(prog string) (map[string]string, error) {
	files := map[string]string{}
	var add func(guest, host string) error
	add = func(guest, host string) error {
		if _, ok := files[guest]; ok {
			return nil
		}
		files[guest] = host
		f, err := elf.Open(host)
		if err != nil {
			return fmt.Errorf("vmtest: %s: %w", host, err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b := make([]byte, p.Filesz)
				if _, err := p.ReadAt(b, 0); err != nil {
					return fmt.Errorf("vmtest: %s interpreter: %w", host, err)
				}
				interp := strings.TrimRight(string(b), "\x00")
				if err := add(interp, interp); err != nil {
					return err
				}
			}
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("vmtest: %s libraries: %w", host, err)
		}
		for _, lib := range libs {
			found := ""
			for _, d := range libDirs {
				if _, err := os.Stat(filepath.Join(d, lib)); err == nil {
					found = path.Join(d, lib)
					break
				}
			}
			if found == "" {
				return fmt.Errorf("%w: %s needs %s, found in none of %v", ErrMissingHostProgram, host, lib, libDirs)
			}
			if err := add(found, found); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := os.Stat(prog); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMissingHostProgram, prog, err)
	}
	return files, add(prog, prog)
}
