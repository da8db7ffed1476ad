package policy

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func newP(t *testing.T, o PromotionOptions) *Promotion {
	t.Helper()
	p, err := NewPromotion(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOneHitWonderIsNeverPromoted(t *testing.T) {
	p := newP(t, PromotionOptions{Counters: 1 << 12})
	r := rand.New(rand.NewPCG(1, 1))
	promoted := 0
	for i := 0; i < 1000; i++ {
		h := r.Uint64()
		p.Record(h)
		if p.Promote(h, 100, Warm) != None || p.Promote(h, 100, Cold) != None {
			promoted++
		}
	}
	// Only a doorkeeper false positive can promote a key seen once: with
	// 1000 keys in a 4096-counter sketch that is well under 1%.
	if promoted > 10 {
		t.Fatalf("%d of 1000 keys seen once were promoted", promoted)
	}
	p = newP(t, PromotionOptions{Counters: 1 << 12})
	p.Record(12345)
	if p.Promote(12345, 100, Warm) != None {
		t.Fatal("the only key ever seen, seen once, was promoted")
	}
}

func TestFrequentKeyIsPromoted(t *testing.T) {
	p := newP(t, PromotionOptions{Counters: 1 << 12})
	h := uint64(0xdeadbeef)
	p.Record(h)
	p.Record(h)
	if got := p.Promote(h, 100, Warm); got != Hot {
		t.Fatalf("key seen twice: Promote = %v, want hot", got)
	}
}

func TestLargerValuesNeedMoreHits(t *testing.T) {
	p := newP(t, PromotionOptions{Counters: 1 << 12, SizeUnit: 4096, MaxHotValue: 1 << 20})
	h := uint64(42)
	need := func(size int) int {
		for i := 1; i <= 16; i++ {
			p.Record(h)
			if p.Promote(h, size, Warm) == Hot {
				return i
			}
		}
		return 99
	}
	small := need(100)
	p = newP(t, PromotionOptions{Counters: 1 << 12, SizeUnit: 4096, MaxHotValue: 1 << 20})
	big := need(256 << 10)
	if big <= small {
		t.Fatalf("a 256 KiB value needed %d hits, a 100 B one %d: size is not weighed", big, small)
	}
	p = newP(t, PromotionOptions{Counters: 1 << 12, MaxHotValue: 1000})
	for i := 0; i < 20; i++ {
		p.Record(h)
	}
	if p.Promote(h, 2000, Warm) == Hot {
		t.Fatal("a value above MaxHotValue was promoted to hot")
	}
}

func TestEstimateNeverDecreasesBeforeReset(t *testing.T) {
	p := newP(t, PromotionOptions{Counters: 1 << 16})
	r := rand.New(rand.NewPCG(2, 2))
	keys := make([]uint64, 200)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	last := map[uint64]int{}
	for i := 0; i < 20000; i++ { // well below the reset (10 × counters)
		h := keys[r.IntN(len(keys))]
		p.Record(h)
		e := p.Estimate(h)
		if e < last[h] {
			t.Fatalf("estimate fell from %d to %d", last[h], e)
		}
		last[h] = e
	}
}

func TestResetAgesCounts(t *testing.T) {
	p := newP(t, PromotionOptions{Counters: 16})
	h := uint64(7)
	for i := 0; i < 15; i++ {
		p.Record(h)
	}
	before := p.Estimate(h)
	r := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 400; i++ { // past 10 × 16 additions: at least one reset
		p.Record(r.Uint64())
	}
	if after := p.Estimate(h); after >= before {
		t.Fatalf("estimate %d → %d: no aging after a reset", before, after)
	}
}

func TestConcurrentRecord(t *testing.T) {
	p := newP(t, PromotionOptions{Counters: 1 << 10})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 4))
			for i := 0; i < 20000; i++ {
				h := r.Uint64() % 500
				p.Record(h)
				p.Promote(h, 100, Warm)
			}
		}(g)
	}
	wg.Wait()
}

func TestFlashBudget(t *testing.T) {
	now := int64(0)
	f, err := NewFlash(FlashOptions{BytesPerSec: 1000, Burst: 1000, Clock: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for i := 0; i < 100; i++ {
		if f.Admit(uint64(i), 100) {
			admitted += 100
		}
	}
	if admitted != 1000 {
		t.Fatalf("admitted %d bytes from a full 1000-byte bucket", admitted)
	}
	now += 500_000_000 // half a second: 500 more bytes
	for i := 0; i < 100; i++ {
		if f.Admit(uint64(i), 100) {
			admitted += 100
		}
	}
	if admitted != 1500 {
		t.Fatalf("admitted %d bytes after 0.5 s at 1000 B/s, want 1500", admitted)
	}
}

func TestFlashRejectFirst(t *testing.T) {
	f, err := NewFlash(FlashOptions{RejectFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.Admit(99, 10) {
		t.Fatal("first offer admitted")
	}
	if !f.Admit(99, 10) {
		t.Fatal("second offer refused")
	}
}

func TestValidateReportsEverything(t *testing.T) {
	o := PromotionOptions{Counters: 3, HotHits: 40, WarmHits: -1, SizeUnit: -1}
	err := o.Validate()
	for _, want := range []string{"Counters", "HotHits", "WarmHits", "SizeUnit"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
	fo := FlashOptions{BytesPerSec: -1, Burst: -1}
	if err := fo.Validate(); err == nil || !strings.Contains(err.Error(), "BytesPerSec") || !strings.Contains(err.Error(), "Burst") {
		t.Errorf("FlashOptions.Validate() = %v", err)
	}
}

func TestDemoteSkipsOneHitWonders(t *testing.T) {
	p := newP(t, PromotionOptions{Counters: 1 << 12})
	p.Record(5)
	if p.Demote(5, 100) {
		t.Fatal("a victim seen once was demoted to warm")
	}
	p.Record(5)
	if !p.Demote(5, 100) {
		t.Fatal("a victim seen twice was not demoted")
	}
}

func TestRecordSampledCountsInExpectation(t *testing.T) {
	p, err := NewPromotion(PromotionOptions{Counters: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	// Many keys, each recorded 64 times by sampling: the mean estimate is
	// close to 16 (saturated) only if samples weigh SampleEvery; a key with
	// no sample in 64 calls has probability (7/8)^64 ≈ 2e-4.
	const keys, calls = 200, 64
	low := 0
	for k := uint64(1); k <= keys; k++ {
		h := k * 0x9e3779b97f4a7c15
		for i := 0; i < calls; i++ {
			p.RecordSampled(h)
		}
		if p.Estimate(h) < SampleEvery {
			low++
		}
	}
	if low > keys/20 {
		t.Fatalf("%d of %d keys recorded %d times by sampling estimate below %d", low, keys, calls, SampleEvery)
	}
	// A single sample of a fresh key counts SampleEvery accesses.
	h := uint64(0xdeadbeef12345)
	for p.Estimate(h) == 0 {
		p.RecordSampled(h)
	}
	if got := p.Estimate(h); got != SampleEvery {
		t.Fatalf("first sample: estimate %d, want %d", got, SampleEvery)
	}
}
