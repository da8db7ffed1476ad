package pubsub

// Kind is what a subscription names: a channel (SUBSCRIBE), a pattern
// (PSUBSCRIBE) or a shard channel (SSUBSCRIBE, Redis 7.0's sharded
// pub/sub). Shard channels are a namespace of their own: SPUBLISH reaches
// only their subscribers, PUBLISH never does, and no pattern matches them
// (pubsub.c keeps server.pubsubshard_channels apart).
type Kind uint8

const (
	Channel Kind = iota
	Pattern
	Shard
	kinds
)

// names are Redis's reply and message kinds (pubsub.c's shared objects):
// the answer to a subscription, to an unsubscription, and the message.
var names = [kinds]struct{ subscribe, unsubscribe, message string }{
	Channel: {"subscribe", "unsubscribe", "message"},
	Pattern: {"psubscribe", "punsubscribe", "pmessage"},
	Shard:   {"ssubscribe", "sunsubscribe", "smessage"},
}

// SubscribeReply is the first element of the answer to a subscription of
// kind k ("subscribe", "psubscribe", "ssubscribe").
func (k Kind) SubscribeReply() string { return names[k].subscribe }

// UnsubscribeReply is the first element of the answer to an
// unsubscription of kind k ("unsubscribe", "punsubscribe", "sunsubscribe").
func (k Kind) UnsubscribeReply() string { return names[k].unsubscribe }
