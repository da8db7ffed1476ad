package nvmept

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/uring"
)

func openPassthrough(t *testing.T) *nvmekv.Passthrough {
	t.Helper()
	p, err := nvmekv.OpenPassthrough(ngPath, nvmekv.PassthroughOptions{AllowNonKV: true, RingEntries: 64})
	if err != nil {
		t.Fatalf("OpenPassthrough(%s, AllowNonKV): %v", ngPath, err)
	}
	t.Cleanup(func() { p.Close() })
	if p.NSID() != nsid || p.CSI() != nvmekv.CSINVM {
		t.Fatalf("passthrough nsid %d csi %d, want %d and 0 (NVM)", p.NSID(), p.CSI(), nsid)
	}
	return p
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestKVRefusedOnNVMNamespace: the nvmekv passthrough layer refuses to
// open, and refuses every KV opcode on, a CSI 0 namespace (KV Store is NVM
// Write's opcode); afterwards every block of the namespace is unchanged.
func TestKVRefusedOnNVMNamespace(t *testing.T) {
	requireGuest(t)
	d := openDev(t)
	// Non-zero content, so a stray write would change the sum (8 commands
	// of 128 KiB: QEMU's MDTS 7 caps one command at 512 KiB).
	const chunk = 128 << 10
	seed := mmapBuf(t, 8*chunk)
	fill(seed, 4242)
	seedIO := func(write bool, buf []byte) {
		var reqs []*uring.Request
		for i := 0; i < len(buf)/chunk; i++ {
			reqs = append(reqs, d.rw(write, uint64(i*chunk)/uint64(d.blk), buf[i*chunk:(i+1)*chunk]))
		}
		d.mustOK("seed I/O", d.do(reqs...), nvmekv.OpStore)
	}
	seedIO(true, seed)
	before := d.checksumAll(chunk)

	_, err := nvmekv.OpenPassthrough(ngPath, nvmekv.PassthroughOptions{})
	if !errors.Is(err, nvmekv.ErrNotKV) {
		t.Fatalf("OpenPassthrough(%s) = %v, want ErrNotKV", ngPath, err)
	}
	if msg := err.Error(); !strings.Contains(msg, ngPath) || !strings.Contains(msg, "command set identifier 0") || strings.Contains(msg, "\n") {
		t.Fatalf("refusal %q does not name the device and its CSI in one line", msg)
	}
	t.Logf("open refused: %v", err)

	p := openPassthrough(t)
	ctx := ctxT(t)
	key, val := []byte("tiercache-key-01"), bytes.Repeat([]byte{0xa5}, 4096)
	checks := map[string]error{
		"Store":    p.Store(ctx, key, val, 0),
		"Delete":   p.Delete(ctx, key),
		"Retrieve": func() error { _, err := p.Retrieve(ctx, key, make([]byte, 4096)); return err }(),
		"Exist":    func() error { _, err := p.Exist(ctx, key); return err }(),
		"List":     func() error { _, _, err := p.List(ctx, nil, 4096); return err }(),
	}
	ops := []*nvmekv.Op{{Code: nvmekv.OpStore, Key: key, Buf: val}, {Code: nvmekv.OpRetrieve, Key: key, Buf: make([]byte, 512)}}
	checks["Do(Store, Retrieve)"] = p.Do(ctx, ops...)
	for name, err := range checks {
		if !errors.Is(err, nvmekv.ErrNotKV) {
			t.Errorf("%s on a CSI 0 namespace = %v, want ErrNotKV", name, err)
		}
	}
	for i, op := range ops {
		if !errors.Is(op.Err, nvmekv.ErrNotKV) {
			t.Errorf("op %d Err = %v, want ErrNotKV", i, op.Err)
		}
	}
	// The user-key layer cannot be built on it either (no KV limits).
	if kv, err := nvmekv.NewKV(p, nvmekv.KVOptions{}); err == nil {
		perr := kv.Put(ctx, []byte("user key"), val, nvmekv.Meta{})
		if !errors.Is(perr, nvmekv.ErrNotKV) {
			t.Errorf("KV.Put on a CSI 0 namespace = %v, want ErrNotKV", perr)
		}
	} else {
		t.Logf("NewKV refused: %v", err)
	}

	if after := d.checksumAll(chunk); after != before {
		t.Fatalf("namespace content changed after the refused KV commands: %x -> %x", before, after)
	}
	got := mmapBuf(t, len(seed))
	seedIO(false, got)
	if !bytes.Equal(got, seed) {
		t.Fatal("seed blocks changed")
	}
}

// TestPassthroughRawHelpers uses nvmekv's exported helpers (Identify,
// Raw NVM commands, Flush, fixed buffers) against the real driver.
func TestPassthroughRawHelpers(t *testing.T) {
	requireGuest(t)
	p := openPassthrough(t)
	ctx := ctxT(t)
	c, err := p.IdentifyController()
	if err != nil || c.Serial != serial {
		t.Fatalf("IdentifyController = %+v, %v; want serial %q", c, err, serial)
	}
	ns, err := p.IdentifyNamespace()
	if err != nil || ns.NSZE == 0 || ns.BlockBytes == 0 {
		t.Fatalf("IdentifyNamespace = %+v, %v", ns, err)
	}
	if want := imageBytes(); want != 0 && ns.NSZE*uint64(ns.BlockBytes) != want {
		t.Fatalf("namespace %d × %d bytes, want %d", ns.NSZE, ns.BlockBytes, want)
	}
	const qd, size = 32, 4096
	w, r := mmapBuf(t, qd*size), mmapBuf(t, qd*size)
	fill(w, 77)
	nlb := uint32(size) / ns.BlockBytes
	var writes, reads []nvmekv.RawCmd
	for i := 0; i < qd; i++ {
		lba := 16384 + uint64(i)*uint64(nlb)
		writes = append(writes, nvmekv.RawCmd{Cmd: nvmekv.EncodeNVMWrite(nsid, lba, nlb), Buf: w[i*size : (i+1)*size]})
		reads = append(reads, nvmekv.RawCmd{Cmd: nvmekv.EncodeNVMRead(nsid, lba, nlb), Buf: r[i*size : (i+1)*size]})
	}
	for _, step := range []struct {
		name string
		cmds []nvmekv.RawCmd
	}{{"raw writes", writes}, {"raw reads", reads}} {
		res, err := p.Raw(ctx, step.cmds...)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		for i, rr := range res {
			if err := nvmekv.DecodeResult(nvmekv.OpRetrieve, rr.Res); err != nil {
				t.Fatalf("%s, command %d: %v", step.name, i, err)
			}
		}
	}
	if !bytes.Equal(w, r) {
		t.Fatal("Raw QD32: read data differs from written data")
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	// Fixed buffers through the helper: commands whose Buf starts at a
	// registered buffer use IORING_URING_CMD_FIXED.
	fw, fr := mmapBuf(t, size), mmapBuf(t, size)
	if err := p.RegisterBuffers([][]byte{fw, fr}); err != nil {
		t.Fatalf("RegisterBuffers: %v", err)
	}
	fill(fw, 78)
	lba := uint64(20000)
	for _, c := range []nvmekv.RawCmd{{Cmd: nvmekv.EncodeNVMWrite(nsid, lba, nlb), Buf: fw}, {Cmd: nvmekv.EncodeNVMRead(nsid, lba, nlb), Buf: fr}} {
		res, err := p.Raw(ctx, c)
		if err != nil || res[0].Res != 0 {
			t.Fatalf("fixed-buffer raw command: %v %+v", err, res)
		}
	}
	if !bytes.Equal(fw, fr) {
		t.Fatal("fixed-buffer raw read differs from the write")
	}
	res, err := p.Raw(ctx, nvmekv.RawCmd{Cmd: nvmekv.EncodeNVMRead(nsid, ns.NSZE, 1), Buf: fr[:ns.BlockBytes]})
	var se *nvmekv.StatusError
	if err != nil || !errors.As(nvmekv.DecodeResult(nvmekv.OpRetrieve, res[0].Res), &se) || se.SC != scLBAOutOfRange || !se.DNR {
		t.Fatalf("raw read beyond the namespace: %v %+v, want status SC 0x80 DNR", err, res)
	}
}
