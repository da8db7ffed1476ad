package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/tcptarget"
)

// kvTargetFlags are the flags of `tiercache kvtarget`.
type kvTargetFlags struct {
	listen, store, nqn, logLevel string
	capacity, maxValue           ByteSize
}

func parseKVTargetFlags(args []string, stderr io.Writer) (*kvTargetFlags, error) {
	f := &kvTargetFlags{}
	fs := flag.NewFlagSet("tiercache kvtarget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:4420", "TCP address to serve NVMe/TCP on (4420 is the NVMe/TCP I/O port)")
	fs.StringVar(&f.store, "store", "", "file or block device of the emulated KV namespace (required)")
	fs.StringVar(&f.nqn, "nqn", tcptarget.DefaultNQN, "subsystem NQN hosts connect to")
	fs.Var(&f.capacity, "capacity", "namespace data capacity for a new store file, e.g. 1GiB (default 1GiB or the existing size)")
	fs.Var(&f.maxValue, "max-value", "largest Store value announced (KVVML), e.g. 128KiB (default 128KiB)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments: %q", fs.Args()))
	}
	if f.store == "" {
		errs = append(errs, errors.New("-store is required: the file or block device holding the namespace"))
	}
	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		errs = append(errs, fmt.Errorf("-listen %q: %w", f.listen, err))
	}
	return f, errors.Join(errs...)
}

// cmdKVTarget serves an emulated KV namespace as an NVMe/TCP KV SSD until
// SIGTERM or SIGINT: the Linux nvme-tcp host connects to it and exposes
// the namespace as /dev/ngXnY, the device cold.backend passthrough takes.
// The namespace runs in Strict mode (a full device answers Capacity
// Exceeded, as a KV SSD does, instead of dropping old records).
func cmdKVTarget(args []string, stdout, stderr io.Writer) int {
	f, err := parseKVTargetFlags(args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	log, tty := newTermLogger(LoggingConfig{Level: f.logLevel, Format: "auto"}, stderr)
	defer log.Sync()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	// Opening a big store rebuilds its index: a status line on a terminal,
	// a log line a second otherwise (C14).
	ld := newLoadReport(log, "store", progressOut{tty: tty})
	ns, err := emu.Open(emu.Options{Path: f.store, Capacity: int64(f.capacity), Mode: emu.Strict, Logger: log, Progress: ld.report})
	ld.end(err)
	if err != nil {
		return exitCode(fmt.Errorf("open the KV namespace: %w", err), stderr)
	}
	tg, err := tcptarget.New(tcptarget.Options{Namespace: ns, NQN: f.nqn, MaxValueBytes: int(f.maxValue), Logger: log})
	if err != nil {
		ns.Close()
		return exitCode(err, stderr)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		ns.Close()
		return exitCode(fmt.Errorf("listen: %w", err), stderr)
	}
	served := make(chan error, 1)
	go func() {
		err := tg.Serve(ln)
		if !errors.Is(err, tcptarget.ErrClosed) {
			log.Error("serve", zap.Error(err))
			sigs <- syscall.SIGTERM // shut down as on a signal
		}
		served <- err
	}()
	lim := ns.Limits()
	fmt.Fprintf(stdout, "tiercache kvtarget: serving %s (NSID 1, KV command set) on %s from %s (%d bytes)\n",
		tg.NQN(), ln.Addr(), f.store, lim.Capacity)
	return awaitShutdown(sigs, func() error {
		err := tg.Close()
		<-served
		return errors.Join(err, ns.Close())
	}, log)
}
