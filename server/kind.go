package server

import "github.com/tiercache/tiercache/tier"

// The kinds of value the server stores. The cache keeps a key's kind beside
// its value in every tier (tier.Kind, T23); the server alone gives it a
// meaning and an encoding.
const (
	kindString = tier.KindString
	kindHash   = tier.Kind(1)
	kindList   = tier.Kind(2)
	kindSet    = tier.Kind(3)
	kindZSet   = tier.Kind(4)
)

// kindName is TYPE's answer for a kind.
func kindName(k tier.Kind) string {
	switch k {
	case kindString:
		return "string"
	case kindHash:
		return "hash"
	case kindList:
		return "list"
	case kindSet:
		return "set"
	case kindZSet:
		return "zset"
	}
	return "unknown"
}
