package vmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// goPackage is one line of `go list`.
type goPackage struct{ ImportPath, Name string }

func goList(ctx context.Context, dir string, patterns []string) ([]goPackage, error) {
	args := append([]string{"list", "-f", "{{.ImportPath}} {{.Name}}"}, patterns...)
	out, err := goCmd(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	var pkgs []goPackage
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			pkgs = append(pkgs, goPackage{f[0], f[1]})
		}
	}
	return pkgs, nil
}

// goCmd runs the go tool with CGO_ENABLED=0 (static binaries for the guest).
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("vmtest: go %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// built are the host-built guest programs.
type built struct {
	init     string
	tests    []GuestTest // Path is the host path here
	binaries map[string]string
}

// buildGuest compiles the init, the test binaries and the extra binaries as
// static executables into work.
func buildGuest(ctx context.Context, o *Options, work string) (*built, error) {
	ldflags := "-ldflags=-s -w"
	b := &built{init: filepath.Join(work, "init"), binaries: map[string]string{}}
	if _, err := goCmd(ctx, o.Dir, "build", "-trimpath", ldflags, "-o", b.init, "./vmtest/guestinit"); err != nil {
		return nil, err
	}
	pkgs, err := goList(ctx, o.Dir, o.Packages)
	if err != nil {
		return nil, err
	}
	testDir := filepath.Join(work, "tests") + string(filepath.Separator)
	if err := os.MkdirAll(testDir, 0o755); err != nil {
		return nil, fmt.Errorf("vmtest: %w", err)
	}
	args := []string{"test", "-c", "-trimpath", ldflags, "-o", testDir}
	for _, p := range pkgs {
		args = append(args, p.ImportPath)
	}
	if _, err := goCmd(ctx, o.Dir, args...); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		if seen[p.Name] {
			return nil, fmt.Errorf("vmtest: two guest packages are both named %q; test binaries are named after the package", p.Name)
		}
		seen[p.Name] = true
		path := filepath.Join(testDir, p.Name+".test")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("vmtest: guest package %s has no test binary (no _test.go files?): %w", p.ImportPath, err)
		}
		b.tests = append(b.tests, GuestTest{Name: p.Name, Pkg: p.ImportPath, Path: path})
	}
	for _, pat := range o.Binaries {
		ps, err := goList(ctx, o.Dir, []string{pat})
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			name := filepath.Base(p.ImportPath)
			out := filepath.Join(work, "bin", name)
			if _, err := goCmd(ctx, o.Dir, "build", "-trimpath", ldflags, "-o", out, p.ImportPath); err != nil {
				return nil, err
			}
			b.binaries[name] = out
		}
	}
	return b, nil
}

// writeInitramfs packs the init, the test binaries, the extra binaries and
// the kernel modules into a newc cpio at path.
func writeInitramfs(o *Options, b *built, mods []Module, path string) (GuestConfig, error) {
	cfg := GuestConfig{
		Devices:     []string{"/dev/nvme0", "/dev/nvme0n1", "/dev/ng0n1", "/dev/nvme1n1", "/dev/ng1n1", "/dev/ng2n1"},
		DeviceWait:  o.DeviceWait,
		TestTimeout: o.TestTimeout, Bench: o.Bench, BenchTime: o.BenchTime,
		Run:   o.Run,
		Short: o.Short,
		Env: []string{"TIERCACHE_GUEST=1", "TIERCACHE_NO_SKIP=1", "TIERCACHE_NUMA_NODE=1",
			"TIERCACHE_VM_IMAGE_BYTES=" + strconv.FormatInt(o.ImageBytes, 10)},
	}
	f, err := os.Create(path)
	if err != nil {
		return cfg, fmt.Errorf("vmtest: create initramfs: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := NewCPIOWriter(bw)
	var firstErr error
	add := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "etc", "bin", "tests", "lib", "lib/modules"} {
		add(w.Dir(d, 0o755))
	}
	add(w.CharDev("dev/console", 0o600, 5, 1))
	add(w.CharDev("dev/null", 0o666, 1, 3))
	add(addHostFile(w, "init", b.init))
	kconfig, _ := os.ReadFile(filepath.Join("/boot", "config-"+filepath.Base(o.ModulesDir)))
	for _, m := range mods {
		data, compressed, err := ModuleForGuest(m.Path, "\n"+string(kconfig))
		if err != nil {
			add(err)
			continue
		}
		p := "/lib/modules/" + m.Name + ".ko"
		if compressed {
			p = "/lib/modules/" + m.Name + filepath.Ext(m.Path)
		}
		add(w.File(p, 0o644, data))
		cfg.Modules = append(cfg.Modules, GuestModule{Path: p, Compressed: compressed, Params: ModuleParams[m.Name]})
	}
	for _, t := range b.tests {
		p := "/tests/" + t.Name + ".test"
		add(addHostFile(w, p, t.Path))
		cfg.Tests = append(cfg.Tests, GuestTest{Name: t.Name, Pkg: t.Pkg, Path: p})
	}
	for name, host := range b.binaries {
		p := "/bin/" + name
		add(addHostFile(w, p, host))
		cfg.Env = append(cfg.Env, "TIERCACHE_BIN_"+strings.ToUpper(name)+"="+p)
	}
	dirs := map[string]bool{}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "etc", "bin", "tests", "lib", "lib/modules"} {
		dirs[d] = true
	}
	for _, prog := range o.HostPrograms {
		files, err := HostProgramFiles(prog)
		if err != nil {
			add(err)
			continue
		}
		for _, guest := range slices.Sorted(maps.Keys(files)) {
			name := strings.TrimPrefix(guest, "/")
			add(mkdirs(w, filepath.Dir(name), dirs))
			add(addHostFile(w, name, files[guest]))
		}
		cfg.Env = append(cfg.Env, "TIERCACHE_BIN_"+strings.ToUpper(filepath.Base(prog))+"="+prog)
	}
	js, err := json.MarshalIndent(cfg, "", "  ")
	add(err)
	add(w.File(GuestConfigPath, 0o644, js))
	add(w.Close())
	add(bw.Flush())
	add(f.Close())
	if firstErr != nil {
		return cfg, fmt.Errorf("vmtest: write initramfs %s: %w", path, firstErr)
	}
	return cfg, nil
}

// mkdirs adds the directory dir and its missing parents, shallowest
// first (the kernel's initramfs unpacker creates no parent directory:
// init/initramfs.c do_name).
func mkdirs(w *CPIOWriter, dir string, have map[string]bool) error {
	if dir == "." || dir == "/" || have[dir] {
		return nil
	}
	if err := mkdirs(w, path.Dir(dir), have); err != nil {
		return err
	}
	have[dir] = true
	return w.Dir(dir, 0o755)
}

func addHostFile(w *CPIOWriter, name, host string) error {
	data, err := os.ReadFile(host)
	if err != nil {
		return err
	}
	return w.File(name, 0o755, data)
}
