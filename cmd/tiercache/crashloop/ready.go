package crashloop

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Ready is nil once the server behind rc answers with its dataset loaded:
// INFO persistence says loading:0. PING is no such sign: tiercache
// answers it while its cache is still opening (server S27), when commands
// that touch data answer -LOADING; redis-server says loading:0 too.
func Ready(ctx context.Context, rc *redis.Client) error {
	info, err := rc.Info(ctx, "persistence").Result()
	if err == nil && !strings.Contains(info, "\nloading:0") {
		err = ErrLoading
	}
	return err
}
