package vmtest

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"6.1.0-9-amd64", "6.1.0-57-amd64", true},
		{"6.1.0-57-amd64", "6.1.0-9-amd64", false},
		{"6.1.0-57-amd64", "6.12.0-1-amd64", true},
		{"6.1.0-57-amd64", "6.1.0-57-amd64", false},
	} {
		if got := versionLess(c.a, c.b); got != c.less {
			t.Errorf("versionLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

func TestFindKernelPrefersNewestAmd64WithModules(t *testing.T) {
	root := t.TempDir()
	boot, mods := filepath.Join(root, "boot"), filepath.Join(root, "modules")
	for _, v := range []string{"6.1.0-9-amd64", "6.1.0-57-amd64", "6.8.0-1-cloud", "7.0.0-1-amd64"} {
		writeFile(t, filepath.Join(boot, "vmlinuz-"+v), "k")
		if v != "7.0.0-1-amd64" { // a kernel without modules is unusable
			writeFile(t, filepath.Join(mods, v, "modules.dep"), "")
		}
	}
	k, m, err := findKernel(boot, mods)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(k) != "vmlinuz-6.1.0-57-amd64" || filepath.Base(m) != "6.1.0-57-amd64" {
		t.Fatalf("findKernel = %s %s", k, m)
	}
	if _, _, err := findKernel(filepath.Join(root, "none"), mods); !errors.Is(err, ErrSkip) {
		t.Fatalf("no kernel: err = %v, want ErrSkip", err)
	}
}

func TestQEMUArgsUseTCGAndCPULessNode(t *testing.T) {
	o := Options{}
	o.EnsureDefaults()
	args := strings.Join(QEMUArgs(&o, "K", "I", []string{"A", "B", "C"}), " ")
	for _, want := range []string{"-accel tcg,thread=single", "node,nodeid=1,memdev=m1", "cpus=0-1", "-no-reboot", "panic=-1",
		"file=A,if=none,id=nv0", "nvme,serial=tiercachevm,drive=nv0", "file=B,if=none,id=nv1", "nvme,serial=tiercachecold,drive=nv1",
		"file=C,if=none,id=nv2", "nvme,id=nvme2,serial=tiercachemeta", "nvme-ns,drive=nv2,bus=nvme2,nsid=1,ms=8,pi=1"} {
		if !strings.Contains(args, want) {
			t.Errorf("qemu args lack %q: %s", want, args)
		}
	}
	if strings.Contains(args, "kvm") {
		t.Errorf("qemu args use KVM, which hangs here: %s", args)
	}
	if slices.Contains(QEMUArgs(&o, "K", "I", nil), "-enable-kvm") {
		t.Error("-enable-kvm present")
	}
}

func TestOptionsValidateReportsAll(t *testing.T) {
	o := Options{Packages: []string{}, CPUs: -1, Node0MB: 1, Node1MB: 1, ImageBytes: 5, Timeout: -1}
	err := o.Validate()
	if err == nil {
		t.Fatal("bad options accepted")
	}
	for _, want := range []string{"Packages", "CPUs", "Node0MB", "Node1MB", "ImageBytes", "Timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error lacks %s: %v", want, err)
		}
	}
}
