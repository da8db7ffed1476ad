package emu

import (
	"fmt"
	"testing"
)

// TestOpenReportsProgress (E27): Open of a new store reports once,
// "fresh" and finished; reopening a store of 2,000 keys over about ten
// regions reports from the checkpoint, then (checkpoint disabled) by a
// scan, each with Done never decreasing, Total fixed, a report per region
// replayed, and a last report Finished at 100% with every key, whose
// method is the one Stats.Recovered names.
func TestOpenReportsProgress(t *testing.T) {
	const keys = 2000
	var reps []Progress
	o := testOptions(t)
	o.Progress = func(p Progress) { reps = append(reps, p) }
	ns := mustOpen(t, o)
	if len(reps) != 1 || reps[0].Method != "fresh" || !reps[0].Finished || reps[0].Percent() != 100 || reps[0].Keys != 0 {
		t.Fatalf("new store: reports %+v, want one fresh, finished", reps)
	}
	val := make([]byte, 200)
	for i := 0; i < keys; i++ {
		if err := ns.Store(ctx, []byte(fmt.Sprintf("key-%05d", i)), val, 0); err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
	}
	used := ns.Stats().UsedRegions
	if err := ns.Close(); err != nil {
		t.Fatal(err)
	}
	if used < 5 {
		t.Fatalf("%d keys use %d regions; the test wants several", keys, used)
	}
	for _, method := range []string{"checkpoint", "scan"} {
		if method == "scan" {
			o.CheckpointPath = "-"
		}
		reps = nil
		ns := mustOpen(t, o)
		recovered := ns.Stats().Recovered
		ns.Close()
		if recovered != method {
			t.Fatalf("reopened by %s, want %s", recovered, method)
		}
		checkProgress(t, method, reps, keys)
		if method == "scan" && len(reps) < used+1 {
			t.Errorf("scan of %d regions: %d reports, want one per region", used, len(reps))
		}
		t.Logf("%s: %d reports, last %+v", method, len(reps), reps[len(reps)-1])
	}
}

// checkProgress checks one Open's reports: one method, Done and Keys
// never decreasing, Total fixed, Elapsed growing, the last one Finished
// at 100% with keys keys, and no other Finished.
func checkProgress(t *testing.T, method string, reps []Progress, keys int) {
	t.Helper()
	if len(reps) < 2 {
		t.Fatalf("%s: %d reports, want progress and a last one", method, len(reps))
	}
	for i, p := range reps {
		if p.Method != method || p.Done > p.Total || p.Finished != (i == len(reps)-1) {
			t.Fatalf("%s: report %d of %d: %+v", method, i, len(reps), p)
		}
		if i == 0 {
			continue
		}
		q := reps[i-1]
		if p.Done < q.Done || p.Total != q.Total || p.Keys < q.Keys || p.Elapsed < q.Elapsed || p.Percent() < q.Percent() {
			t.Fatalf("%s: report %d went back: %+v after %+v", method, i, p, q)
		}
	}
	if last := reps[len(reps)-1]; last.Percent() != 100 || last.Keys != keys || last.Total == 0 {
		t.Fatalf("%s: last report %+v, want 100%% of a non-empty input with %d keys", method, last, keys)
	}
}
