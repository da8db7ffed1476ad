package server

import "sync/atomic"

// runtimeConfig is what CONFIG SET may change while the server runs
// (config_set.go), read by the commands as they run.
type runtimeConfig struct {
	// notify is notify-keyspace-events as its flags (notify.go).
	notify atomic.Uint32
	// client-output-buffer-limit pubsub: bytes, bytes, seconds.
	pubsubHard, pubsubSoft, pubsubSoftSeconds atomic.Int64
	// trackingMaxKeys is tracking-table-max-keys (0: unbounded).
	trackingMaxKeys atomic.Int64
}

func (rc *runtimeConfig) init(o *Options) {
	rc.pubsubHard.Store(o.PubSubHardLimit)
	rc.pubsubSoft.Store(o.PubSubSoftLimit)
	rc.pubsubSoftSeconds.Store(int64(o.PubSubSoftSeconds))
	rc.trackingMaxKeys.Store(int64(o.TrackingTableMaxKeys))
	if f, ok := parseNotifyFlags(o.NotifyKeyspaceEvents); ok {
		rc.notify.Store(f)
	}
}
