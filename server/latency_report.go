package server

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// LATENCY GRAPH and LATENCY DOCTOR's texts, as redis-server 7.0 writes
// them (latency.c latencyCommandGenSparkeline, createLatencyReport;
// sparkline.c).

func nowUnix() int64 { return time.Now().Unix() }

// formatMicros is a time of ns nanoseconds in µs as INFO latencystats
// prints it ("%.3f").
func formatMicros(ns uint64) string { return strconv.FormatFloat(float64(ns)/1000, 'f', 3, 64) }

// Sparkline layout (latency.c LATENCY_GRAPH_COLS, sparklineRender's rows;
// sparkline.c's filled charset and label margin).
const (
	graphCols        = 80
	graphRows        = 4
	graphLabelMargin = 1
	graphFill        = "_o#"
)

// latencyGraph is LATENCY GRAPH's text for ev at now: a header with the
// samples' highest and lowest and the all time high, a rule, then the
// samples drawn as a filled sparkline of graphRows rows, each labelled
// with how long ago it was, by graphCols columns.
func latencyGraph(ev *latencyEvent, now int64) string {
	var b strings.Builder
	var lo, hi int64
	labels := make([]string, len(ev.samples))
	for i, s := range ev.samples {
		if i == 0 || s.ms < lo {
			lo = s.ms
		}
		if i == 0 || s.ms > hi {
			hi = s.ms
		}
		labels[i] = agoLabel(now - s.unix)
	}
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", ev.name, hi, lo, ev.max)
	b.WriteString(strings.Repeat("-", graphCols) + "\n")
	for j := 0; j < len(ev.samples); j += graphCols {
		if j != 0 {
			b.WriteByte('\n')
		}
		end := min(j+graphCols, len(ev.samples))
		sparkRange(&b, ev.samples[j:end], labels[j:end], lo, hi)
	}
	return b.String()
}

// agoLabel is a sample's label: seconds, minutes, hours or days ago.
func agoLabel(secs int64) string {
	switch {
	case secs < 60:
		return strconv.FormatInt(secs, 10) + "s"
	case secs < 3600:
		return strconv.FormatInt(secs/60, 10) + "m"
	case secs < 3600*24:
		return strconv.FormatInt(secs/3600, 10) + "h"
	}
	return strconv.FormatInt(secs/(3600*24), 10) + "d"
}

// sparkRange draws samples (of the whole series' lo..hi) as
// sparklineRenderRange does with SPARKLINE_FILL: each sample's step of
// rows×3 from its height, a row per third of it from the top, '|' below
// its top, then the rows of the labels, written downwards, after a blank
// margin.
func sparkRange(b *strings.Builder, samples []latencySample, labels []string, lo, hi int64) {
	steps := len(graphFill) * graphRows
	rel := float64(hi - lo)
	if rel == 0 {
		rel = 1
	}
	line := make([]byte, len(samples))
	for row := 0; ; row++ {
		more := false
		for j := range line {
			line[j] = ' '
		}
		for j, s := range samples {
			step := int(float64(int(float64(s.ms-lo)*float64(steps))) / rel)
			step = min(max(step, 0), steps-1)
			if row < graphRows {
				more = true
				idx := step - (graphRows-row-1)*len(graphFill)
				if idx >= 0 && idx < len(graphFill) {
					line[j] = graphFill[idx]
				} else if idx >= len(graphFill) {
					line[j] = '|'
				}
				continue
			}
			if row-graphRows < graphLabelMargin {
				more = true
				break
			}
			if k := row - graphRows - graphLabelMargin; k < len(labels[j]) {
				more = true
				line[j] = labels[j][k]
			}
		}
		if !more {
			return
		}
		b.Write(line)
		b.WriteByte('\n')
	}
}

// latencyReport is LATENCY DOCTOR's text (createLatencyReport): the
// events' statistics, then the advice for the events tiercache has
// ("command", "fast-command") and for transparent huge pages; Redis's
// other advice is about events tiercache never records.
func (s *Server) latencyReport() string {
	evs := s.lat.snapshot("", true)
	threshold := s.lat.thresholdMs.Load()
	if len(evs) == 0 && threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	var b strings.Builder
	var slowlogOn, slowlogTune, slowlogInspect, scheduler, largeObjects, thp bool
	advices := 0
	now := nowUnix()
	for i, ev := range evs {
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		n, avg, mad, period := ev.stats(now)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, ev.name, n, avg, mad, float64(period)/float64(n), ev.max)
		switch strings.ToLower(ev.name) {
		case "command":
			us := s.slow.slowerThan.Load()
			if us < 0 {
				slowlogOn = true
				advices++
			} else if us/1000 > threshold {
				slowlogTune = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		}
		b.WriteByte('\n')
	}
	if anonHugePages() > 0 {
		thp = true
		advices++
	}
	switch {
	case len(evs) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
		return b.String()
	case len(evs) > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
		return b.String()
	}
	b.WriteString("\nI have a few advices for you:\n\n")
	if slowlogOn {
		fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", threshold*1000)
	}
	if slowlogTune {
		fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
	}
	if slowlogInspect {
		b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
	}
	if scheduler {
		b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
			"  1) Lower the system load.\n" +
			"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
			"  3) Check if you have a \"noisy neighbour\" problem.\n" +
			"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
			"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
	}
	if largeObjects {
		b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
	}
	if thp {
		b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
	}
	return b.String()
}

// stats are an event's samples' count, average and mean absolute
// deviation (ms, integer as Redis's uint32 arithmetic) and the seconds
// since its oldest (at least 1) (analyzeLatencyForEvent).
func (ev *latencyEvent) stats(now int64) (n, avg, mad, period int64) {
	n = int64(len(ev.samples))
	if n == 0 {
		return 0, 0, 0, 0
	}
	var sum int64
	oldest := ev.samples[0].unix
	for _, s := range ev.samples {
		sum += s.ms
		oldest = min(oldest, s.unix)
	}
	avg = sum / n
	period = max(now-oldest, 1)
	var dev int64
	for _, s := range ev.samples {
		dev += max(avg-s.ms, s.ms-avg)
	}
	return n, avg, dev / n, period
}

// anonHugePages is the process's transparent huge pages in bytes, the
// AnonHugePages of /proc/self/smaps summed (Redis's
// THPGetAnonHugePagesSize); 0 when it cannot be read.
func anonHugePages() int64 {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("AnonHugePages:"))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) > 0 {
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			total += kb * 1024
		}
	}
	return total
}
