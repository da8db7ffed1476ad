package remote

import (
	"strings"
	"time"

	"github.com/redis/rueidis"
	"go.uber.org/zap"
)

// A refusal is a server's answer that it is up and serving reads but will
// not take a write now: the node is no worse for reads, so it does not
// count toward the breaker (R7), and it is counted apart from errors.
// The codes are redis-server's own error prefixes (server.c and
// replication.c of Redis 7.0: shared.oomerr "-OOM command not allowed
// when used memory > 'maxmemory'.", shared.roslaveerr "-READONLY You
// can't write against a read only replica.", shared.bgsaveerr "-MISCONF
// ...", shared.noreplicaserr "-NOREPLICAS ...").
type refusal int

const (
	notRefused refusal = iota
	refusedOOM
	refusedReadOnly
	refusedOther // MISCONF, NOREPLICAS
)

// refusedBy classifies err: a write refusal, or notRefused (nil, a nil
// reply, a transport error, any other server error).
func refusedBy(err error) refusal {
	re, ok := rueidis.IsRedisErr(err)
	if !ok || re == nil {
		return notRefused
	}
	msg := re.Error()
	// A transaction with a refused command is aborted as a whole: EXEC
	// answers EXECABORT naming the refused command's error.
	msg = strings.TrimPrefix(msg, "EXECABORT Transaction discarded because of previous errors.")
	switch code, _, _ := strings.Cut(strings.TrimSpace(msg), " "); code {
	case "OOM":
		return refusedOOM
	case "READONLY":
		return refusedReadOnly
	case "MISCONF", "NOREPLICAS":
		return refusedOther
	}
	return notRefused
}

// refused counts a write of one key the server refused (R7); it reports
// whether err was a refusal.
func (s *Store) refused(err error) bool {
	switch refusedBy(err) {
	case refusedOOM:
		s.st.oom.Add(1)
	case refusedReadOnly:
		s.st.readOnly.Add(1)
		s.redial.Store(true)
	case refusedOther:
	default:
		return false
	}
	s.st.refused.Add(1)
	return true
}

// redialNow replaces the client old, which a node answered READONLY
// through, by a new one made from the seeds (R10): a seed that is a DNS
// name or a provider's primary endpoint names the new master after a
// failover, while the old client's connections stay on the demoted one;
// a cluster client reads the topology again. At most once a
// BreakerBackoff; the new client's tracking starts empty, so Watch is
// told any key may have changed.
func (s *Store) redialNow(old rueidis.Client) {
	if time.Since(s.redialed) < s.cfg.BreakerBackoff {
		return
	}
	s.redialed = time.Now()
	s.redial.Store(false)
	s.st.redials.Add(1)
	s.log.Warn("remote tier refused a write as a replica (READONLY): connecting to the seeds again", zap.Strings("addrs", s.cfg.Addrs))
	if err := s.connect(); err != nil {
		s.log.Warn("remote: reconnect after READONLY", zap.Error(err))
		return
	}
	old.Close()
	s.resync.Store(true)
}
