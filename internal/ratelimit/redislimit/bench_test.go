package redislimit_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/ratelimit"
)

// redisCPU is the Redis server's CPU time so far (INFO cpu, user + sys).
func redisCPU(b *testing.B, c *redis.Client) time.Duration {
	s, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(s, "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}

// BenchmarkAdmit is one limited request's Redis work, from 32 goroutines
// at once as the gateway's clients would: Admit (all three limits), its
// tokens taken, Done. It reports the Redis server's CPU a request beside
// the client's time (redis-µs/op; the server is shared with whatever else
// runs on it, so run it alone).
func BenchmarkAdmit(b *testing.B) {
	for _, keys := range []int{1, 100} {
		b.Run(strconv.Itoa(keys)+"keys", func(b *testing.B) {
			c, _ := testRedis(b)
			a := newAdmitter(b, "")
			l := ratelimit.Limits{RPM: 1e9, TPM: 1e12, Concurrency: 1e6}
			names := make([]string, keys)
			for i := range names {
				names[i] = "key_" + strconv.Itoa(i)
			}
			cpu0 := redisCPU(b, c)
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					k := names[i%keys]
					i++
					now := time.Now()
					ad := a.Admit(k, l, now)
					a.TakeTokens(k, 500, ad.Ahead, l.TPM, now)
					a.Done(k, ad.Slot, -200, l.TPM, now)
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(redisCPU(b, c)-cpu0)/float64(time.Microsecond)/float64(b.N), "redis-µs/op")
		})
	}
}
