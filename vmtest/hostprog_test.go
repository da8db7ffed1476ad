package vmtest

import (
	"errors"
	"strings"
	"testing"
)

// TestHostProgramFiles: a dynamically linked host program comes with its
// ELF interpreter and libc, each at its host path; a missing program is
// ErrMissingHostProgram.
func TestHostProgramFiles(t *testing.T) {
	files, err := HostProgramFiles("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	var interp, libc bool
	for guest := range files {
		interp = interp || strings.HasSuffix(guest, "/ld-linux-x86-64.so.2")
		libc = libc || strings.HasSuffix(guest, "/libc.so.6")
	}
	if files["/bin/true"] != "/bin/true" || !interp || !libc {
		t.Fatalf("files %v: want /bin/true, its interpreter and libc", files)
	}
	if _, err := HostProgramFiles("/no/such/program"); !errors.Is(err, ErrMissingHostProgram) {
		t.Fatalf("a missing program: %v", err)
	}
}
