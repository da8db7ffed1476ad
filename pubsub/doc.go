// Package pubsub is the server's channels, patterns, shard channels and
// their subscribers (SUBSCRIBE, PSUBSCRIBE, PUBLISH, SSUBSCRIBE, SPUBLISH,
// PUBSUB), as Redis 7.0's pubsub.c keeps them. A Subscriber is a
// client's queue of out-of-band messages; the registry never writes to a
// connection: Deliver must return at once, and a client too slow to read is the subscriber's to
// refuse and disconnect (the server's pushQueue).
//
// # Invariants
//
//   - PS1: PUBLISH hands a message to a channel's subscribers in the
//     order they subscribed, then to the subscribers of each pattern the
//     channel matches, as [message, channel, payload] and [pmessage,
//     pattern, channel, payload] (RESP2 arrays; a RESP3 subscriber sends
//     them as pushes), and returns how many were handed one
//     (TestPublishOrderAndCount; server TestPubSubMatchesRedis).
//   - PS2: a subscription is counted once however often it is made; the
//     count a SUBSCRIBE or UNSUBSCRIBE answers is the subscriber's
//     channels plus patterns, the count an SSUBSCRIBE or SUNSUBSCRIBE
//     answers its shard channels alone; a channel, pattern or shard
//     channel without subscribers is forgotten (PUBSUB CHANNELS, NUMPAT,
//     SHARDCHANNELS), also when its last subscriber leaves
//     (TestSubscriptionCounts).
//   - PS3: a message a subscriber refuses is counted as dropped, never
//     silent (Stats.Dropped), and Publish never waits for a subscriber
//     (TestRefusedMessagesCounted; server TestSlowSubscriberIsDisconnected).
//   - PS4: shard channels are a namespace of their own, as Redis 7.0's
//     sharded pub/sub: PublishShard hands [smessage, channel, payload] to
//     the shard channel's subscribers in the order they subscribed and to
//     no one else (no channel subscriber, no pattern), and Publish never
//     reaches a shard channel's subscriber, whatever the names
//     (TestShardChannelsApart; server TestShardedPubSubMatchesRedis).
//
// # Caveats
//
//   - Patterns are matched one by one against each published channel,
//     as in Redis: PUBLISH costs O(patterns).
package pubsub
