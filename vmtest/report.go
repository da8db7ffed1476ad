package vmtest

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// BinaryResult is what one guest test binary reported about itself.
type BinaryResult struct {
	Name, Pkg string
	Started   bool          // its begin marker was seen
	Ended     bool          // its end marker was seen
	Exit      int           // exit code from the end marker (-1 if it did not run)
	Final     string        // the binary's last "PASS" or "FAIL" line
	Passed    []string      // "--- PASS: " lines (test names)
	Failed    []string      // "--- FAIL: " lines
	Skipped   []string      // "--- SKIP: " lines
	Elapsed   time.Duration // from the end marker
}

// OK reports whether the binary passed: it ran to its end, exited 0, printed
// PASS, and no test failed or skipped (nothing may skip in the guest).
func (b *BinaryResult) OK() bool { return b.Problem() == "" }

// Problem is a one-line reason the binary did not pass, or "".
func (b *BinaryResult) Problem() string {
	switch {
	case !b.Started:
		return "never started (guest crashed or timed out before it)"
	case !b.Ended:
		return "did not finish (guest crashed or timed out during it)"
	case len(b.Failed) > 0:
		return fmt.Sprintf("%d failed: %s", len(b.Failed), strings.Join(b.Failed, ", "))
	case len(b.Skipped) > 0:
		return fmt.Sprintf("%d skipped in the guest, where nothing may skip: %s", len(b.Skipped), strings.Join(b.Skipped, ", "))
	case b.Exit != 0:
		return fmt.Sprintf("exit status %d", b.Exit)
	case b.Final != "PASS":
		return "no final PASS line"
	case len(b.Passed) == 0:
		return "ran no tests"
	}
	return ""
}

// Report accumulates the guest console output, line by line.
type Report struct {
	Booted   bool
	Kernel   string   // guest kernel release from the boot marker
	Done     bool     // the done marker was seen
	Errors   []string // init errors
	Binaries []*BinaryResult
	cur      *BinaryResult
}

// NewReport expects the given binaries (in order); a binary that never
// reports counts as failed.
func NewReport(tests []GuestTest) *Report {
	r := &Report{}
	for _, t := range tests {
		r.Binaries = append(r.Binaries, &BinaryResult{Name: t.Name, Pkg: t.Pkg, Exit: -1})
	}
	return r
}

func (r *Report) find(name string) *BinaryResult {
	for _, b := range r.Binaries {
		if b.Name == name {
			return b
		}
	}
	b := &BinaryResult{Name: name, Pkg: name, Exit: -1}
	r.Binaries = append(r.Binaries, b)
	return b
}

// Line feeds one console line (without its line ending).
func (r *Report) Line(line string) {
	line = strings.TrimRight(line, "\r\n")
	if i := strings.Index(line, MarkerPrefix); i >= 0 {
		r.marker(strings.Fields(line[i+len(MarkerPrefix):]), line[i+len(MarkerPrefix):])
		return
	}
	b := r.cur
	if b == nil {
		return
	}
	t := strings.TrimSpace(line)
	switch {
	case t == "PASS" || t == "FAIL":
		b.Final = t
	case strings.HasPrefix(t, "--- PASS: "):
		b.Passed = append(b.Passed, testName(t))
	case strings.HasPrefix(t, "--- FAIL: "):
		b.Failed = append(b.Failed, testName(t))
	case strings.HasPrefix(t, "--- SKIP: "):
		b.Skipped = append(b.Skipped, testName(t))
	}
}

// testName extracts "TestX/sub" from "--- FAIL: TestX/sub (0.01s)".
func testName(t string) string {
	f := strings.Fields(t)
	if len(f) >= 3 {
		return f[2]
	}
	return t
}

func (r *Report) marker(f []string, raw string) {
	if len(f) == 0 {
		return
	}
	switch f[0] {
	case MarkerBoot:
		r.Booted = true
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "kernel="); ok {
				r.Kernel = v
			}
		}
	case MarkerBegin:
		if len(f) >= 2 {
			r.cur = r.find(f[1])
			r.cur.Started = true
			if len(f) >= 3 {
				r.cur.Pkg = f[2]
			}
		}
	case MarkerEnd:
		if len(f) >= 2 {
			b := r.find(f[1])
			b.Ended = true
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "exit":
					if n, err := strconv.Atoi(v); err == nil {
						b.Exit = n
					}
				case "elapsed":
					if d, err := time.ParseDuration(v); err == nil {
						b.Elapsed = d
					}
				}
			}
			r.cur = nil
		}
	case MarkerError:
		r.Errors = append(r.Errors, strings.TrimSpace(strings.TrimPrefix(raw, MarkerError)))
	case MarkerDone:
		r.Done = true
		r.cur = nil
	}
}

// Err is nil if the guest booted, every expected binary passed, the init
// reported no error and the done marker arrived.
func (r *Report) Err() error {
	var probs []string
	if !r.Booted {
		probs = append(probs, "the guest init never started")
	}
	probs = append(probs, r.Errors...)
	for _, b := range r.Binaries {
		if p := b.Problem(); p != "" {
			probs = append(probs, b.Pkg+": "+p)
		}
	}
	if !r.Done && r.Booted {
		probs = append(probs, "the guest never printed its done marker")
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrGuestFailed, strings.Join(probs, "; "))
}

// WriteSummary prints one go-test-style line per binary ("ok  \t<pkg>\t1.2s"
// or "FAIL\t<pkg>\t1.2s (reason)") and a count line, as CI expects.
func (r *Report) WriteSummary(w io.Writer) {
	pass, fail := 0, 0
	for _, b := range r.Binaries {
		if p := b.Problem(); p == "" {
			pass++
			fmt.Fprintf(w, "ok  \t%s\t%.3fs\t(in QEMU guest, %d tests)\n", b.Pkg, b.Elapsed.Seconds(), len(b.Passed))
		} else {
			fail++
			fmt.Fprintf(w, "FAIL\t%s\t%.3fs\t(in QEMU guest: %s)\n", b.Pkg, b.Elapsed.Seconds(), p)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "vmtest: guest init error: %s\n", e)
	}
	fmt.Fprintf(w, "vmtest: %d passed, %d failed\n", pass, fail)
}
