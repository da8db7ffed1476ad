package vmtest

import (
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveModulesOrdersDependenciesFirst(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "modules.dep"), `
kernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko kernel/block/t10-pi.ko kernel/lib/crc64.ko
kernel/drivers/nvme/host/nvme-core.ko: kernel/block/t10-pi.ko kernel/lib/crc64.ko
kernel/block/t10-pi.ko: kernel/lib/crc64.ko
kernel/lib/crc64.ko:
kernel/other/unrelated.ko:
`)
	writeFile(t, filepath.Join(dir, "modules.builtin"), "kernel/lib/crct10dif_common.ko\n")
	mods, err := ResolveModules(dir, []string{"crct10dif_common", "nvme", "t10-pi", "nvme_core"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range mods {
		names = append(names, m.Name)
	}
	want := []string{"crc64", "t10_pi", "nvme_core", "nvme"}
	if len(names) != len(want) {
		t.Fatalf("modules = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("modules = %v, want %v", names, want)
		}
	}
	if mods[3].Path != filepath.Join(dir, "kernel/drivers/nvme/host/nvme.ko") {
		t.Fatalf("nvme path = %s", mods[3].Path)
	}
	if _, err := ResolveModules(dir, []string{"nosuchmod"}); !errors.Is(err, ErrModuleNotFound) {
		t.Fatalf("unknown module error = %v, want ErrModuleNotFound", err)
	}
}

// TestResolveModulesSoftAbsent is V5 on a 6.12-style modules.dep: t10-pi is
// built into the block layer without a modules.builtin line, and nvme needs
// nvme-auth instead.
func TestResolveModulesSoftAbsent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "modules.dep"), `
kernel/drivers/nvme/common/nvme-auth.ko.xz:
kernel/drivers/nvme/host/nvme-core.ko.xz: kernel/drivers/nvme/common/nvme-auth.ko.xz
kernel/drivers/nvme/host/nvme.ko.xz: kernel/drivers/nvme/host/nvme-core.ko.xz kernel/drivers/nvme/common/nvme-auth.ko.xz
`)
	writeFile(t, filepath.Join(dir, "modules.builtin"), "kernel/lib/crc64.ko\nkernel/lib/crc-t10dif.ko\n")
	mods, err := ResolveModules(dir, NVMeModules)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range mods {
		names = append(names, m.Name)
	}
	if want := "[nvme_auth nvme_core nvme]"; fmt.Sprint(names) != want {
		t.Fatalf("modules = %v, want %s", names, want)
	}
	// A module that is not soft must still resolve.
	if _, err := ResolveModules(dir, []string{"nvme", "dm-flakey"}); !errors.Is(err, ErrModuleNotFound) {
		t.Fatalf("missing dm-flakey: err = %v, want ErrModuleNotFound", err)
	}
}

func TestResolveModulesCycle(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "modules.dep"), "a.ko: b.ko\nb.ko: a.ko\n")
	if _, err := ResolveModules(dir, []string{"a"}); err == nil {
		t.Fatal("a dependency cycle was accepted")
	}
}

func TestReadModuleDecompresses(t *testing.T) {
	dir := t.TempDir()
	elf := "\x7fELF-object"
	writeFile(t, filepath.Join(dir, "plain.ko"), elf)
	f, err := os.Create(filepath.Join(dir, "gz.ko.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(elf))
	zw.Close()
	f.Close()
	writeFile(t, filepath.Join(dir, "junk.ko"), "not elf")
	for _, n := range []string{"plain.ko", "gz.ko.gz"} {
		b, err := ReadModule(filepath.Join(dir, n))
		if err != nil || string(b) != elf {
			t.Fatalf("ReadModule(%s) = %q, %v", n, b, err)
		}
	}
	if _, err := ReadModule(filepath.Join(dir, "junk.ko")); err == nil {
		t.Fatal("a non-ELF module was accepted")
	}
	if _, err := ReadModule(filepath.Join(dir, "x.ko.lz4")); err == nil {
		t.Fatal("an unknown compression was accepted")
	}
}

// TestResolveRealNVMeModules checks the installed guest kernel, when there
// is one (the real run is scripts/vmtest).
func TestResolveRealNVMeModules(t *testing.T) {
	_, dir, err := FindKernel()
	if err != nil {
		skipOrFail(t, "no guest kernel installed (scripts/vmtest installs linux-image-amd64): %v", err)
	}
	mods, err := ResolveModules(dir, NVMeModules)
	if err != nil {
		t.Fatal(err)
	}
	if last := mods[len(mods)-1]; last.Name != "nvme" {
		t.Fatalf("last module = %s, want nvme", last.Name)
	}
	for _, m := range mods {
		if _, err := ReadModule(m.Path); err != nil {
			t.Fatal(err)
		}
	}
}

func TestModuleForGuestCompressedFallback(t *testing.T) {
	dir := t.TempDir()
	// A .ko.zst the host cannot decompress here (not zstd data, or no
	// zstd tool): packed as is only when the kernel decompresses modules.
	path := filepath.Join(dir, "m.ko.zst")
	writeFile(t, path, "not really zstd")
	if _, _, err := ModuleForGuest(path, "\nCONFIG_MODULE_COMPRESS_NONE=y\n"); err == nil {
		t.Fatal("undecompressable module accepted for a kernel without CONFIG_MODULE_DECOMPRESS")
	}
	data, compressed, err := ModuleForGuest(path, "\nCONFIG_MODULE_DECOMPRESS=y\n")
	if err != nil || !compressed || string(data) != "not really zstd" {
		t.Fatalf("ModuleForGuest = %q, %v, %v; want the raw file, compressed", data, compressed, err)
	}
	writeFile(t, filepath.Join(dir, "p.ko"), "\x7fELF")
	if data, compressed, err := ModuleForGuest(filepath.Join(dir, "p.ko"), "\nCONFIG_MODULE_DECOMPRESS=y\n"); err != nil || compressed || string(data) != "\x7fELF" {
		t.Fatalf("plain module: %q, %v, %v", data, compressed, err)
	}
}
