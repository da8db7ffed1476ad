package vmtest

import (
	"errors"
	"strings"
	"testing"
)

func feed(r *Report, s string) {
	for _, l := range strings.Split(s, "\n") {
		r.Line(l + "\r")
	}
}

var twoTests = []GuestTest{{Name: "a", Pkg: "p/a"}, {Name: "b", Pkg: "p/b"}}

func TestReportPass(t *testing.T) {
	r := NewReport(twoTests)
	feed(r, `SeaBIOS noise
@@vmtest boot kernel=6.1.0-57-amd64
@@vmtest begin a p/a
=== RUN   TestX
--- PASS: TestX (0.00s)
PASS
@@vmtest end a exit=0 elapsed=1.5s
[    3.1] some kernel line @@vmtest begin b p/b
=== RUN   TestY
=== RUN   TestY/sub
    --- PASS: TestY/sub (0.00s)
--- PASS: TestY (0.00s)
PASS
@@vmtest end b exit=0 elapsed=20ms
@@vmtest done`)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if r.Kernel != "6.1.0-57-amd64" || r.Binaries[0].Elapsed.Seconds() != 1.5 || len(r.Binaries[1].Passed) != 2 {
		t.Fatalf("report = %+v %+v %+v", r, r.Binaries[0], r.Binaries[1])
	}
	var sb strings.Builder
	r.WriteSummary(&sb)
	if !strings.Contains(sb.String(), "ok  \tp/a\t1.500s") || !strings.Contains(sb.String(), "2 passed, 0 failed") {
		t.Fatalf("summary:\n%s", sb.String())
	}
}

func TestReportFailures(t *testing.T) {
	cases := []struct{ name, out, want string }{
		{"no boot", "", "never started"},
		{"test fails", `@@vmtest boot kernel=x
@@vmtest begin a p/a
--- FAIL: TestX (0.00s)
FAIL
@@vmtest end a exit=1 elapsed=1s
@@vmtest begin b p/b
--- PASS: TestY (0.00s)
PASS
@@vmtest end b exit=0 elapsed=1s
@@vmtest done`, "p/a: 1 failed: TestX"},
		{"skip in guest", `@@vmtest boot kernel=x
@@vmtest begin a p/a
--- SKIP: TestX (0.00s)
--- PASS: TestZ (0.00s)
PASS
@@vmtest end a exit=0 elapsed=1s
@@vmtest begin b p/b
--- PASS: TestY (0.00s)
PASS
@@vmtest end b exit=0 elapsed=1s
@@vmtest done`, "skipped in the guest"},
		{"crash mid-binary", `@@vmtest boot kernel=x
@@vmtest begin a p/a
=== RUN   TestX
Kernel panic`, "p/a: did not finish"},
		{"panic exit", `@@vmtest boot kernel=x
@@vmtest begin a p/a
--- PASS: TestX (0.00s)
panic: boom
@@vmtest end a exit=2 elapsed=1s
@@vmtest begin b p/b
--- PASS: TestY (0.00s)
PASS
@@vmtest end b exit=0 elapsed=1s
@@vmtest done`, "p/a: exit status 2"},
		{"init error", `@@vmtest boot kernel=x
@@vmtest error guestinit: devices /dev/ng0n1 did not appear within 30s
@@vmtest begin a p/a
--- PASS: TestX (0.00s)
PASS
@@vmtest end a exit=0 elapsed=1s
@@vmtest begin b p/b
--- PASS: TestY (0.00s)
PASS
@@vmtest end b exit=0 elapsed=1s
@@vmtest done`, "did not appear"},
		{"no done", `@@vmtest boot kernel=x
@@vmtest begin a p/a
--- PASS: TestX (0.00s)
PASS
@@vmtest end a exit=0 elapsed=1s
@@vmtest begin b p/b
--- PASS: TestY (0.00s)
PASS
@@vmtest end b exit=0 elapsed=1s`, "never printed its done marker"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReport(twoTests)
			feed(r, c.out)
			err := r.Err()
			if !errors.Is(err, ErrGuestFailed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Err() = %v, want ErrGuestFailed containing %q", err, c.want)
			}
		})
	}
}
