// Command vmrun boots the vmtest QEMU guest and runs the guest tests in it
// (see package vmtest). scripts/vmtest is the usual way to call it.
//
// Exit status: 0 when every guest test passed or the run was skipped (a
// "skipped" line says why), 1 when a guest test failed or the run broke,
// 2 for bad flags. With -noskip (or TIERCACHE_NO_SKIP=1) a skip is a failure.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tiercache/tiercache/vmtest"
)

func main() {
	var o vmtest.Options
	pkgs := flag.String("pkgs", "", "comma-separated guest test packages (default: all of ./vmtest/guest/...)")
	bins := flag.String("bins", strings.Join(vmtest.DefaultBinaries, ","), `comma-separated main packages to pack as /bin/<name> ("none": no binaries)`)
	hostProgs := flag.String("hostprogs", strings.Join(vmtest.DefaultHostPrograms, ","), `comma-separated host executables to pack with their libraries ("none": none)`)
	flag.StringVar(&o.Dir, "dir", ".", "Go module root")
	flag.StringVar(&o.Kernel, "kernel", "", "guest kernel (default: newest /boot/vmlinuz-* with modules)")
	flag.StringVar(&o.Run, "run", "", "-test.run regexp for every guest binary")
	flag.DurationVar(&o.Timeout, "timeout", 20*time.Minute, "hard limit for the guest run")
	flag.DurationVar(&o.TestTimeout, "test.timeout", 10*time.Minute, "-test.timeout of each guest binary (TCG on a loaded 2-CPU host runs the sidecar package in up to 8 min)")
	flag.BoolVar(&o.KeepWork, "keep", false, "keep the work directory")
	flag.BoolVar(&o.Short, "short", false, "run the guest binaries with -test.short")
	flag.StringVar(&o.Bench, "bench", "", "-test.bench regexp for every guest binary (benchmarks run in the guest too)")
	flag.StringVar(&o.BenchTime, "benchtime", "", "-test.benchtime with -bench")
	noSkip := flag.Bool("noskip", os.Getenv("TIERCACHE_NO_SKIP") == "1", "fail instead of skipping when QEMU or a kernel is missing")
	flag.Parse()
	if *pkgs != "" {
		o.Packages = strings.Split(*pkgs, ",")
	}
	switch *bins {
	case "none", "":
		o.Binaries = []string{}
	default:
		o.Binaries = strings.Split(*bins, ",")
	}
	switch *hostProgs {
	case "none", "":
		o.HostPrograms = []string{}
	default:
		o.HostPrograms = strings.Split(*hostProgs, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err := vmtest.Run(ctx, o)
	switch {
	case err == nil:
		fmt.Println("vmtest: PASS")
	case errors.Is(err, vmtest.ErrSkip) && !*noSkip:
		fmt.Printf("vmtest: skipped: %v\n", err)
	default:
		fmt.Printf("vmtest: FAIL: %v\n", err)
		os.Exit(1)
	}
}
