// Report reads what one run of scripts/bench left (run.jsonl: the run's
// machine, commit, date and each step's exact command, status and time;
// results.jsonl: every figure the bench scripts recorded through
// scripts/bench-record.sh; logs/<step>.log, from which the Go benchmarks'
// lines are read: the hit-ratio benchmarks and the QEMU guest's) and
// writes the benchmark report: a markdown section per step with the peer,
// tiercache and their ratio, the PNG charts (gonum.org/v1/plot) and the
// README's summary.
//
// # Invariants
//
//   - R1: a ratio is the median of the per-round ratios, each of two
//     figures from the same round (the peer ran back to back with
//     tiercache); a round only one of them has is left out
//     (TestRatioPerRound).
//   - R2: it writes only the -md file, the -img directory and the -readme
//     file it is given (TestWritesOnlyWhereTold); scripts/bench --quick
//     gives it the run's directory, never docs/ (scripts/test.d/70-bench).
//   - R3: in a file it splices, everything outside its markers is kept
//     byte for byte, and a file without the markers is not overwritten
//     (TestSpliceKeepsTheRest).
//   - R4: a step that failed, or ran and recorded no figures, is said so in
//     the report and makes the exit status 1 (TestStepWithoutFigures).
//   - R5: every chart the markdown links exists (TestReportFromRun).
//   - R6: a ratio chart draws whatever ratios it gets, 0 among them (a
//     round whose CPU clock read no tick): its log axis is ticked over the
//     positive ones only (TestRatioChartWithZeros).
package main
