package load

import (
	"bufio"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	v := make([]byte, 1536)
	Fill(v, 7, 3)
	ver, _, err := Check(v, 7, len(v), nil)
	if err != nil || ver != 3 {
		t.Fatalf("Check of a whole value: version %d, %v", ver, err)
	}
	if _, _, err := Check(v, 8, len(v), nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("another key's value: %v", err)
	}
	if _, _, err := Check(v[:100], 7, len(v), nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("a short value: %v", err)
	}
	v[1000] ^= 1
	if _, _, err := Check(v, 7, len(v), nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("a flipped byte: %v", err)
	}
}

func TestVersions(t *testing.T) {
	vs := NewVersions(4)
	v := make([]byte, 64)
	for range 2 {
		if err := vs.Write(1, v, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	lo := vs.Acked(1)
	if lo != 2 {
		t.Fatalf("acked %d after two writes", lo)
	}
	if _, err := vs.CheckRead(v, 1, len(v), lo, nil); err != nil {
		t.Errorf("the newest version: %v", err)
	}
	old := make([]byte, 64)
	Fill(old, 1, 1)
	if _, err := vs.CheckRead(old, 1, len(old), lo, nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("a stale version: %v", err)
	}
	Fill(old, 1, 3)
	if _, err := vs.CheckRead(old, 1, len(old), lo, nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("a version never written: %v", err)
	}
	// A failed write leaves its version acceptable (the server may hold
	// it) and the acknowledged one too.
	_ = vs.Write(1, v, func() error { return errors.New("down") })
	if _, err := vs.CheckRead(v, 1, len(v), lo, nil); err != nil {
		t.Errorf("the version of a failed write: %v", err)
	}
	vals := [][]byte{make([]byte, 64), make([]byte, 64)}
	if err := vs.WriteBatch([]int{0, 2}, vals, func() error { return nil }); err != nil || vs.Acked(0) != 1 || vs.Acked(2) != 1 {
		t.Errorf("WriteBatch: %v, acked %d %d", err, vs.Acked(0), vs.Acked(2))
	}
	path := filepath.Join(t.TempDir(), "state")
	if err := vs.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadVersions(path, 4)
	if err != nil || back.Acked(1) != 2 || back.issued[1].Load() != 3 || back.Acked(2) != 1 {
		t.Errorf("LoadVersions: %v", err)
	}
}

// TestMemcache runs the memcached client against a fake server that
// answers a set, a hit and a miss as memcached does.
func TestMemcache(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mc.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		store := map[string]string{}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			f := strings.Fields(line)
			switch f[0] {
			case "set":
				data, _ := r.ReadString('\n')
				store[f[1]] = strings.TrimSuffix(data, "\r\n")
				c.Write([]byte("STORED\r\n"))
			case "get":
				if v, ok := store[f[1]]; ok {
					c.Write([]byte("VALUE " + f[1] + " 0 " + strconv.Itoa(len(v)) + "\r\n" + v + "\r\nEND\r\n"))
				} else {
					c.Write([]byte("END\r\n"))
				}
			}
		}
	}()
	c := dialMemcache(t, sock)
	ctx := context.Background()
	if err := c.SetMany(ctx, []string{"a", "b"}, [][]byte{[]byte("one"), []byte("two")}); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "c", []byte("three")); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "one", "b": "two", "c": "three"} {
		v, ok, err := c.Get(ctx, nil, k)
		if err != nil || !ok || string(v) != want {
			t.Errorf("get %s: %q %v %v", k, v, ok, err)
		}
	}
	if v, ok, err := c.Get(ctx, nil, "nope"); err != nil || ok {
		t.Errorf("get of a missing key: %q %v %v", v, ok, err)
	}
}
