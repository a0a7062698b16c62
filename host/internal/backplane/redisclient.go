package backplane

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// NewClient returns a client of the Redis server c names, set up as the
// backplane's own (TLS, Microsoft Entra tokens, command deadlines), for
// other state the instances share there. It does not contact the server.
func (c RedisConnection) NewClient() (*redis.Client, error) {
	o, err := c.options()
	if err != nil {
		return nil, fmt.Errorf("opening the Redis connection: %w", err)
	}
	return redis.NewClient(o), nil
}
