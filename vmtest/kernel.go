package vmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FindKernel returns the newest /boot/vmlinuz-<version> that has a
// /lib/modules/<version>/modules.dep, preferring Debian's "-amd64" flavour
// (the linux-image-amd64 package). It wraps ErrSkip when there is none.
func FindKernel() (kernel, modulesDir string, err error) {
	return findKernel("/boot", "/lib/modules")
}

func findKernel(boot, modRoot string) (string, string, error) {
	imgs, _ := filepath.Glob(filepath.Join(boot, "vmlinuz-*"))
	type cand struct{ path, ver string }
	var cs []cand
	for _, p := range imgs {
		ver := strings.TrimPrefix(filepath.Base(p), "vmlinuz-")
		if _, err := os.Stat(filepath.Join(modRoot, ver, "modules.dep")); err == nil {
			cs = append(cs, cand{p, ver})
		}
	}
	if len(cs) == 0 {
		return "", "", fmt.Errorf("%w: no %s/vmlinuz-* with a matching %s/<version>/modules.dep (install linux-image-amd64)", ErrSkip, boot, modRoot)
	}
	sort.Slice(cs, func(i, j int) bool {
		ai, aj := strings.HasSuffix(cs[i].ver, "-amd64"), strings.HasSuffix(cs[j].ver, "-amd64")
		if ai != aj {
			return ai
		}
		return versionLess(cs[j].ver, cs[i].ver)
	})
	return cs[0].path, filepath.Join(modRoot, cs[0].ver), nil
}

// ModulesDirFor maps /boot/vmlinuz-<version> to /lib/modules/<version>.
func ModulesDirFor(kernel string) string {
	return filepath.Join("/lib/modules", strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-"))
}

// versionLess compares "6.1.0-57-amd64" style versions numerically field by field.
func versionLess(a, b string) bool {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' || r == '+' || r == '~' })
	}
	fa, fb := split(a), split(b)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		na, ea := strconv.Atoi(fa[i])
		nb, eb := strconv.Atoi(fb[i])
		switch {
		case ea == nil && eb == nil && na != nb:
			return na < nb
		case (ea != nil || eb != nil) && fa[i] != fb[i]:
			return fa[i] < fb[i]
		}
	}
	return len(fa) < len(fb)
}
