// Package benchcmp runs contenders of a benchmark in alternating chunks
// inside one process, so that drift on a shared machine hits each of them
// alike, and reports each one's wall and CPU time per operation and its
// ratio to the first contender, the baseline.
package benchcmp

import (
	"sort"
	"testing"
	"time"
)

// Contender is one way of doing the benchmarked operation.
type Contender struct {
	// Name labels the contender's metrics; keep it short and without
	// spaces.
	Name string
	// Op runs the operation n times.
	Op func(n int)
}

// Run runs b.N operations of each contender, in rounds of chunk
// operations per contender, alternating the order each round. It reports,
// per contender, "<name>-ns/op" (wall), "<name>-cpu-ns/op" (process CPU,
// all goroutines), and for all but the first "<name>/<base>" (the ratio of
// the totals of wall time) with "<name>/<base>-p10" and "-p90" (the
// spread of the ratios of single rounds, a measure of the noise),
// "<name>/<base>-cpu" (the ratio of the totals of CPU time) and
// "<name>/<base>-cpu-p50" (the median of the rounds' CPU ratios, which a
// few rounds disturbed by other processes do not move). The default ns/op
// metric is the sum over all contenders.
func Run(b *testing.B, chunk int, cs ...Contender) {
	b.Helper()
	if chunk < 1 {
		chunk = 1
	}
	wall := make([]time.Duration, len(cs))
	cpu := make([]time.Duration, len(cs))
	var rounds, cpuRounds [][]time.Duration
	b.ResetTimer()
	for done, round := 0, 0; done < b.N; round++ {
		n := min(chunk, b.N-done)
		r := make([]time.Duration, len(cs))
		rc := make([]time.Duration, len(cs))
		for k := range cs {
			i := k
			if round%2 == 1 {
				i = len(cs) - 1 - k
			}
			c0 := cpuTime()
			t0 := time.Now()
			cs[i].Op(n)
			r[i] = time.Since(t0)
			rc[i] = cpuTime() - c0
			cpu[i] += rc[i]
			wall[i] += r[i]
		}
		rounds = append(rounds, r)
		cpuRounds = append(cpuRounds, rc)
		done += n
	}
	b.StopTimer()
	for i, c := range cs {
		b.ReportMetric(float64(wall[i].Nanoseconds())/float64(b.N), c.Name+"-ns/op")
		b.ReportMetric(float64(cpu[i].Nanoseconds())/float64(b.N), c.Name+"-cpu-ns/op")
		if i == 0 || wall[0] == 0 {
			continue
		}
		unit := c.Name + "/" + cs[0].Name
		b.ReportMetric(float64(wall[i])/float64(wall[0]), unit)
		b.ReportMetric(float64(cpu[i])/float64(max(cpu[0], 1)), unit+"-cpu")
		ratios := make([]float64, 0, len(rounds))
		for _, r := range rounds {
			if r[0] > 0 {
				ratios = append(ratios, float64(r[i])/float64(r[0]))
			}
		}
		if len(ratios) >= 3 {
			sort.Float64s(ratios)
			b.ReportMetric(ratios[len(ratios)/10], unit+"-p10")
			b.ReportMetric(ratios[len(ratios)*9/10], unit+"-p90")
		}
		cpuRatios := make([]float64, 0, len(cpuRounds))
		for _, r := range cpuRounds {
			if r[0] > 0 {
				cpuRatios = append(cpuRatios, float64(r[i])/float64(r[0]))
			}
		}
		if len(cpuRatios) >= 3 {
			sort.Float64s(cpuRatios)
			b.ReportMetric(cpuRatios[len(cpuRatios)/2], unit+"-cpu-p50")
		}
	}
}
