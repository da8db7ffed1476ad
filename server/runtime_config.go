package server

import (
	"sync/atomic"

	"github.com/tiercache/tiercache/value/hll"
)

// runtimeConfig is what CONFIG SET may change while the server runs
// (config_set.go), read by the commands as they run.
type runtimeConfig struct {
	// notify is notify-keyspace-events as its flags (notify.go).
	notify atomic.Uint32
	// client-output-buffer-limit pubsub: bytes, bytes, seconds.
	pubsubHard, pubsubSoft, pubsubSoftSeconds atomic.Int64
	// trackingMaxKeys is tracking-table-max-keys (0: unbounded).
	trackingMaxKeys atomic.Int64
	// hllSparseMax is hll-sparse-max-bytes: the size past which a sparse
	// HyperLogLog turns dense (cmd_hll.go).
	hllSparseMax atomic.Int64
}

func (rc *runtimeConfig) init(o *Options) {
	rc.pubsubHard.Store(o.PubSubHardLimit)
	rc.pubsubSoft.Store(o.PubSubSoftLimit)
	rc.pubsubSoftSeconds.Store(int64(o.PubSubSoftSeconds))
	rc.trackingMaxKeys.Store(max(int64(o.TrackingTableMaxKeys), 0)) // -1: unbounded, which the table's bound 0 is
	rc.hllSparseMax.Store(hll.DefaultSparseMaxBytes)
	if f, ok := parseNotifyFlags(o.NotifyKeyspaceEvents); ok {
		rc.notify.Store(f)
	}
}
