package vmtest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

type cpioEntry struct {
	name         string
	mode         uint32
	rmaj, rmin   uint32
	data         []byte
	headerOffset int
}

// readNewc is an independent decoder used only to check CPIOWriter.
func readNewc(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	for {
		if off%4 != 0 {
			t.Fatalf("header at offset %d is not 4-byte aligned", off)
		}
		if len(b)-off < 110 {
			t.Fatalf("truncated header at %d", off)
		}
		h := b[off : off+110]
		if string(h[:6]) != "070701" {
			t.Fatalf("bad magic %q at %d", h[:6], off)
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(h[6+8*i:14+8*i]), 16, 32)
			if err != nil {
				t.Fatalf("field %d at %d: %v", i, off, err)
			}
			return uint32(v)
		}
		e := cpioEntry{mode: field(1), rmaj: field(9), rmin: field(10), headerOffset: off}
		size, nameSize := int(field(6)), int(field(11))
		p := off + 110
		e.name = string(b[p : p+nameSize-1])
		if b[p+nameSize-1] != 0 {
			t.Fatalf("name of %q not NUL-terminated", e.name)
		}
		p = (p + nameSize + 3) &^ 3
		e.data = b[p : p+size]
		off = (p + size + 3) &^ 3
		if e.name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("%d bytes after trailer", len(b)-off)
			}
			return out
		}
		out = append(out, e)
	}
}

func TestCPIORoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewCPIOWriter(&buf)
	files := map[string][]byte{}
	for i := 0; i < 7; i++ { // sizes 0..6 exercise every padding
		name := fmt.Sprintf("d/f%d%s", i, string(bytes.Repeat([]byte("x"), i)))
		files[name] = bytes.Repeat([]byte{byte(i)}, i)
	}
	if err := w.Dir("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		name := fmt.Sprintf("d/f%d%s", i, string(bytes.Repeat([]byte("x"), i)))
		if err := w.File(name, 0o644, files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.CharDev("dev/console", 0o600, 5, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Symlink("d/link", "f0"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	got := readNewc(t, buf.Bytes())
	if len(got) != 10 {
		t.Fatalf("got %d entries, want 10", len(got))
	}
	if got[0].name != "d" || got[0].mode != ModeDir|0o755 {
		t.Fatalf("dir entry = %q mode %o", got[0].name, got[0].mode)
	}
	for _, e := range got[1:8] {
		if want := files[e.name]; !bytes.Equal(e.data, want) || e.mode != ModeRegular|0o644 {
			t.Fatalf("file %q: data %v mode %o, want %v", e.name, e.data, e.mode, want)
		}
	}
	if c := got[8]; c.name != "dev/console" || c.mode != ModeChar|0o600 || c.rmaj != 5 || c.rmin != 1 {
		t.Fatalf("console entry = %+v", c)
	}
	if l := got[9]; l.mode != ModeSymlink|0o777 || string(l.data) != "f0" {
		t.Fatalf("symlink entry = %+v", l)
	}
}

func TestCPIORejectsBadEntries(t *testing.T) {
	for _, name := range []string{"", "/", "TRAILER!!!", "a\x00b"} {
		w := NewCPIOWriter(&bytes.Buffer{})
		if err := w.File(name, 0o644, nil); !errors.Is(err, ErrBadCPIO) {
			t.Errorf("File(%q) error = %v, want ErrBadCPIO", name, err)
		}
	}
	w := NewCPIOWriter(&bytes.Buffer{})
	_ = w.Close()
	if err := w.File("late", 0o644, nil); !errors.Is(err, ErrBadCPIO) {
		t.Errorf("File after Close error = %v, want ErrBadCPIO", err)
	}
}
