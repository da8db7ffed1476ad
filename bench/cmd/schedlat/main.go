// Command schedlat reads a Go execution trace (go test -trace, runtime/trace)
// and reports how long goroutines waited between being made runnable and
// running, and what they did in between: the figures behind the analysis of
// the emulated namespace's Retrieve at QD 64 (scripts/trace-nvmekv).
//
//	schedlat trace.out
//
// It prints, over every goroutine except those that never blocked:
//   - ready→run: from Waiting→Runnable to Runnable→Running, split by whether
//     it ran on the P that readied it or on another;
//   - run slices: from Running to the next state (its own CPU time on a P);
//   - park→ready: from Running→Waiting to Waiting→Runnable (for a Retrieve,
//     the I/O plus the owner's turnaround);
//   - per P, the time goroutines ran on it, against the trace's wall time.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"golang.org/x/exp/trace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: schedlat trace.out")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "schedlat:", err)
		os.Exit(1)
	}
}

type readied struct {
	at   trace.Time
	proc trace.ProcID
}

// dist is a set of durations in microseconds.
type dist []float64

func (d dist) print(w io.Writer, name string) {
	if len(d) == 0 {
		fmt.Fprintf(w, "%-22s none\n", name)
		return
	}
	sort.Float64s(d)
	sum := 0.0
	for _, v := range d {
		sum += v
	}
	fmt.Fprintf(w, "%-22s n=%-8d mean=%7.1fµs p50=%7.1f p90=%7.1f p99=%7.1f total=%.0fms\n",
		name, len(d), sum/float64(len(d)), d[len(d)/2], d[len(d)*9/10], d[len(d)*99/100], sum/1e3)
}

func us(a, b trace.Time) float64 { return float64(b-a) / 1e3 }

func run(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ready := map[trace.GoID]readied{}
	running := map[trace.GoID]trace.Time{}
	parked := map[trace.GoID]trace.Time{}
	busy := map[trace.ProcID]float64{}
	var sameP, otherP, slices, parkReady dist
	var first, last trace.Time
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if first == 0 {
			first = ev.Time()
		}
		last = ev.Time()
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		g := st.Resource.Goroutine()
		from, to := st.Goroutine()
		switch {
		case from == trace.GoWaiting && to == trace.GoRunnable:
			ready[g] = readied{ev.Time(), ev.Proc()}
			if t, ok := parked[g]; ok {
				parkReady = append(parkReady, us(t, ev.Time()))
				delete(parked, g)
			}
		case from == trace.GoRunnable && to == trace.GoRunning:
			if rd, ok := ready[g]; ok {
				if ev.Proc() == rd.proc {
					sameP = append(sameP, us(rd.at, ev.Time()))
				} else {
					otherP = append(otherP, us(rd.at, ev.Time()))
				}
				delete(ready, g)
			}
		}
		if to == trace.GoRunning {
			running[g] = ev.Time()
		}
		if from == trace.GoRunning {
			if t, ok := running[g]; ok {
				d := us(t, ev.Time())
				slices = append(slices, d)
				busy[ev.Proc()] += d
				delete(running, g)
			}
			if to == trace.GoWaiting {
				parked[g] = ev.Time()
			}
		}
	}
	sameP.print(w, "ready→run (same P)")
	otherP.print(w, "ready→run (other P)")
	slices.print(w, "run slices")
	parkReady.print(w, "park→ready")
	fmt.Fprintf(w, "wall %.0fms\n", us(first, last)/1e3)
	procs := make([]int, 0, len(busy))
	for p := range busy {
		procs = append(procs, int(p))
	}
	sort.Ints(procs)
	for _, p := range procs {
		fmt.Fprintf(w, "P%d ran goroutines for %.0fms\n", p, busy[trace.ProcID(p)]/1e3)
	}
	return nil
}
