package policy

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Tier names a storage tier for promotion decisions.
type Tier uint8

// Tiers from fastest to slowest. None means "stay where it is".
const (
	None Tier = iota
	Hot
	Warm
	Cold
	Remote // the remote tier: shared by the sidecars of many hosts
)

func (t Tier) String() string {
	switch t {
	case Hot:
		return "hot"
	case Warm:
		return "warm"
	case Cold:
		return "cold"
	case Remote:
		return "remote"
	}
	return ""
}

// Promoter decides whether a warm or cold hit moves up. The tier package talks
// to it through this interface; *Promotion implements it.
type Promoter interface {
	// Record counts one access of the key with hash h.
	Record(h uint64)
	// Promote returns the tier a hit of size bytes found in from should be
	// copied to, or None.
	Promote(h uint64, size int, from Tier) Tier
	// Demote reports whether a hot victim deserves warm memory (else it
	// goes to cold, or away).
	Demote(h uint64, size int) bool
}

// PromotionOptions configure a Promotion. Zero values take the defaults.
type PromotionOptions struct {
	// Counters is the number of keys the frequency sketch tracks well
	// (default 1<<20; about 2 bytes each).
	Counters int
	// HotHits is the access count (this one included) a value of up to
	// SizeUnit bytes needs before it is promoted to hot (default 2, so a
	// one-hit wonder never is).
	HotHits int
	// WarmHits is the access count a cold hit needs to be copied to warm
	// (default 2).
	WarmHits int
	// SizeUnit in bytes (default 4096): every doubling of the value size above
	// it adds one to the hits needed ("weighs size").
	SizeUnit int
	// MaxHotValue in bytes: larger values are never promoted to hot
	// (default 1 MiB).
	MaxHotValue int
	// DemoteHits is the access count a hot victim needs to be demoted to
	// warm rather than skipping it (default 2: one-hit wonders skip warm once it is full, tier T20).
	DemoteHits int
	// Disabled turns promotion off (Promote always returns None); accesses
	// are still recorded.
	Disabled bool
}

// EnsureDefaults fills zero fields with their defaults.
func (o *PromotionOptions) EnsureDefaults() {
	if o.Counters == 0 {
		o.Counters = 1 << 20
	}
	if o.HotHits == 0 {
		o.HotHits = 2
	}
	if o.WarmHits == 0 {
		o.WarmHits = 2
	}
	if o.SizeUnit == 0 {
		o.SizeUnit = 4096
	}
	if o.MaxHotValue == 0 {
		o.MaxHotValue = 1 << 20
	}
	if o.DemoteHits == 0 {
		o.DemoteHits = 2
	}
}

// Validate reports every invalid field at once.
func (o *PromotionOptions) Validate() error {
	var errs []error
	if o.Counters < 16 || o.Counters > 1<<30 {
		errs = append(errs, fmt.Errorf("%w: Counters %d is outside [16, 2^30]", ErrInvalidOptions, o.Counters))
	}
	if o.HotHits < 1 || o.HotHits > 16 {
		errs = append(errs, fmt.Errorf("%w: HotHits %d is outside [1, 16]", ErrInvalidOptions, o.HotHits))
	}
	if o.WarmHits < 1 || o.WarmHits > 16 {
		errs = append(errs, fmt.Errorf("%w: WarmHits %d is outside [1, 16]", ErrInvalidOptions, o.WarmHits))
	}
	if o.DemoteHits < 1 || o.DemoteHits > 16 {
		errs = append(errs, fmt.Errorf("%w: DemoteHits %d is outside [1, 16]", ErrInvalidOptions, o.DemoteHits))
	}
	if o.SizeUnit < 1 {
		errs = append(errs, fmt.Errorf("%w: SizeUnit %d must be positive", ErrInvalidOptions, o.SizeUnit))
	}
	if o.MaxHotValue < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxHotValue %d must not be negative", ErrInvalidOptions, o.MaxHotValue))
	}
	return errors.Join(errs...)
}

// Promotion is a TinyLFU-style promoter: a doorkeeper Bloom filter in front
// of a 4-bit count-min sketch with periodic halving. Safe for concurrent use.
type Promotion struct {
	o PromotionOptions
	s *sketch
}

// NewPromotion builds a Promotion.
func NewPromotion(o PromotionOptions) (*Promotion, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Promotion{o: o, s: newSketch(o.Counters)}, nil
}

// Record counts one access.
func (p *Promotion) Record(h uint64) { p.s.increment(h) }

// SampleEvery is how many accesses RecordSampled stands for per sample.
const SampleEvery = 8

// RecordSampled counts one access by sampling: one call in SampleEvery (at
// random) records SampleEvery accesses, the others touch no memory. For
// frequent accesses whose exact count matters little (hits already served
// by hot); the expected count is the true one (P6).
func (p *Promotion) RecordSampled(h uint64) {
	if Sample() {
		p.RecordSample(h)
	}
}

// Sample is true for one call in SampleEvery, at random: a caller that must
// compute h first calls it, then RecordSample, as RecordSampled does.
func Sample() bool { return rand.Uint32()%SampleEvery == 0 }

// RecordSample records SampleEvery accesses of h (one sample).
func (p *Promotion) RecordSample(h uint64) { p.s.add(h, SampleEvery) }

// Estimate returns the (approximate, never under-counted before a reset)
// number of recorded accesses of h, capped at 16.
func (p *Promotion) Estimate(h uint64) int { return p.s.estimate(h) }

// Promote implements Promoter.
func (p *Promotion) Promote(h uint64, size int, from Tier) Tier {
	if p.o.Disabled {
		return None
	}
	f := p.s.estimate(h)
	extra := 0
	if size > p.o.SizeUnit {
		extra = bits.Len(uint(size/p.o.SizeUnit)) - 1
	}
	if size <= p.o.MaxHotValue && f >= p.o.HotHits+extra && (from == Warm || from == Cold || from == Remote) {
		return Hot
	}
	if (from == Cold || from == Remote) && f >= p.o.WarmHits+extra/2 {
		return Warm
	}
	return None
}

// Demote implements Promoter: a victim seen at least DemoteHits times since
// the last reset keeps a place in warm.
func (p *Promotion) Demote(h uint64, size int) bool {
	return p.s.estimate(h) >= p.o.DemoteHits
}
