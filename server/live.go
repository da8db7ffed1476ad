package server

import (
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/list"
)

// The kinds the server keeps live in the DRAM tiers (tier.Edit,
// tier.Read; docs/DESIGN.md "Data types"): each names its tier.Kind and
// the value package's structure that changes in place, made empty or
// from the kind's record.

// listKind: a list is a list.Quick, a deque of packed nodes.
type listKind struct{}

func (listKind) Kind() tier.Kind { return kindList }
func (listKind) New() tier.Live  { return list.NewQuick() }
func (listKind) Load(rec []byte) (tier.Live, error) {
	return list.LoadQuick(rec)
}

var lists tier.LiveKind = listKind{}

// hashKind: a hash is a hash.Hash, its record while small, a table once
// large.
type hashKind struct{}

func (hashKind) Kind() tier.Kind { return kindHash }
func (hashKind) New() tier.Live  { return hash.NewHash() }
func (hashKind) Load(rec []byte) (tier.Live, error) {
	return hash.LoadHash(rec)
}

var hashes tier.LiveKind = hashKind{}
