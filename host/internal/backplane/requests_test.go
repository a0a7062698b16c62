package backplane

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// The benchmarks of this file count what the backplanes cost the storage:
// requests (Azure Storage, each a billed transaction) or commands (Redis)
// per message sent across instances at a steady rate, and per second of
// an idle pair of instances. Both instances' requests are counted.
//
//	go test -run '^$' -bench 'Requests' -benchtime 1x ./host/internal/backplane

// paced sends n messages from b to instance to, one every gap.
func paced(b *testing.B, from Backplane, to string, n int, gap time.Duration) {
	b.Helper()
	ctx := b.Context()
	t := time.NewTicker(gap)
	defer t.Stop()
	for i := range n {
		out, err := from.Send(ctx, to, Message{ID: fmt.Sprintf("p%d-%d", gap.Milliseconds(), i), ClientID: "client1", Body: msg(i).Body})
		require.NoError(b, err)
		require.Equal(b, Taken, out)
		<-t.C
	}
}

// BenchmarkQueueRequests: Azure Storage requests per message at 20
// messages a second, and per second of idling after the traffic.
func BenchmarkQueueRequests(b *testing.B) {
	if testing.Short() {
		b.Skip("takes about a minute")
	}
	az := testutil.StartAzurite(b, repoRoot(b))
	ctx := b.Context()
	counted := newCountingTransport(nil)
	st := Storage{Name: "AzureWebJobsStorage", ConnectionString: az.ConnectionString(), Transport: counted}
	owner, err := NewQueue("reqowner", st, nil)
	require.NoError(b, err)
	sender, err := NewQueue("reqsender", st, nil)
	require.NoError(b, err)
	require.NoError(b, owner.Start(ctx, newStreams("client1").deliver))
	defer owner.Stop(context.WithoutCancel(ctx))
	require.NoError(b, sender.Start(ctx, newStreams().deliver))
	defer sender.Stop(context.WithoutCancel(ctx))
	const n, gap, idle = 200, 50 * time.Millisecond, 40 * time.Second
	for b.Loop() {
		before, kinds := counted.total.Load(), counted.counts()
		paced(b, sender, "reqowner", n, gap)
		sent := counted.total.Load() - before
		b.ReportMetric(float64(sent)/n, "requests/msg")
		for k, v := range counted.counts() {
			b.Logf("traffic %s: %d", k, v-kinds[k])
		}
		// One message every 1.5 s, as an interactive client sends them.
		time.Sleep(10 * time.Second)
		before = counted.total.Load()
		paced(b, sender, "reqowner", 10, 1500*time.Millisecond)
		b.ReportMetric(float64(counted.total.Load()-before)/10, "requests/msg-each-1.5s")
		// Idle: the first seconds still ramp down from the traffic.
		time.Sleep(10 * time.Second)
		before = counted.total.Load()
		time.Sleep(idle)
		b.ReportMetric(float64(counted.total.Load()-before)/idle.Seconds()/2, "idle-requests/s/instance")
	}
}

// redisCommands reads how many commands the server has run.
func redisCommands(b *testing.B, c *redis.Client) int64 {
	info, err := c.Info(b.Context(), "stats").Result()
	require.NoError(b, err)
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(b, err)
			return n
		}
	}
	b.Fatal("no total_commands_processed in INFO stats")
	return 0
}

// BenchmarkRedisRequests: Redis commands per message at 20 messages a
// second, and per second of idling. The INFO commands that count are
// taken off.
func BenchmarkRedisRequests(b *testing.B) {
	srv := testutil.StartRedis(b, testutil.RedisOptions{})
	ctx := b.Context()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	c := RedisConnection{ConnectionString: srv.Addr()}
	owner, err := NewRedis("reqowner", c, nil)
	require.NoError(b, err)
	sender, err := NewRedis("reqsender", c, nil)
	require.NoError(b, err)
	require.NoError(b, owner.Start(ctx, newStreams("client1").deliver))
	defer owner.Stop(context.WithoutCancel(ctx))
	require.NoError(b, sender.Start(ctx, newStreams().deliver))
	defer sender.Stop(context.WithoutCancel(ctx))
	const n, gap, idle = 200, 50 * time.Millisecond, 30 * time.Second
	for b.Loop() {
		before := redisCommands(b, raw)
		paced(b, sender, "reqowner", n, gap)
		sent := redisCommands(b, raw) - before - 1
		b.ReportMetric(float64(sent)/n, "commands/msg")
		before = redisCommands(b, raw)
		time.Sleep(idle)
		b.ReportMetric(float64(redisCommands(b, raw)-before-1)/idle.Seconds()/2, "idle-commands/s/instance")
	}
}

// BenchmarkQueueClockRequests: Azure Storage requests per second per
// instance of three idle instances that each broadcast a change at the
// start of every minute, as the sample's clock does on every instance.
//
//	go test -run '^$' -bench QueueClockRequests -benchtime 1x ./host/internal/backplane
func BenchmarkQueueClockRequests(b *testing.B) {
	if testing.Short() {
		b.Skip("takes over two minutes")
	}
	az := testutil.StartAzurite(b, repoRoot(b))
	ctx := b.Context()
	counted := newCountingTransport(nil)
	st := Storage{Name: "AzureWebJobsStorage", ConnectionString: az.ConnectionString(), Transport: counted}
	const n, minutes = 3, 2
	qs := make([]*Queue, n)
	for i := range qs {
		q, err := NewQueue(fmt.Sprintf("idlereq%d", i), st, &QueueOptions{OnBroadcast: func([]byte) {}})
		require.NoError(b, err)
		require.NoError(b, q.Start(ctx, newStreams().deliver))
		defer q.Stop(context.WithoutCancel(ctx))
		qs[i] = q
	}
	for b.Loop() {
		time.Sleep(5 * time.Second) // the first polls ramp up to the idle pause
		before, kinds := counted.total.Load(), counted.counts()
		start := time.Now()
		for m := range minutes {
			time.Sleep(time.Until(start.Add(time.Duration(m)*time.Minute + time.Second)))
			for _, q := range qs {
				go func() { _ = q.Broadcast(ctx, []byte(`{"minute":true}`)) }()
			}
		}
		time.Sleep(time.Until(start.Add(minutes * time.Minute)))
		total, elapsed := counted.total.Load()-before, time.Since(start)
		for k, v := range counted.counts() {
			b.Logf("idle %s: %d", k, v-kinds[k])
		}
		b.ReportMetric(float64(total)/elapsed.Seconds()/n, "idle-requests/s/instance")
	}
}
