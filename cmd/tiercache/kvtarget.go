package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/dhchap"
	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/nvmekv/tcptarget"
)

// kvTargetFlags are the flags of `tiercache kvtarget`.
type kvTargetFlags struct {
	listen, store, dir, nqn, hosts, logLevel string
	hashes, groups                           string
	capacity, maxValue                       ByteSize
	maxNamespaces                            int
}

func parseKVTargetFlags(args []string, stderr io.Writer) (*kvTargetFlags, error) {
	f := &kvTargetFlags{}
	fs := flag.NewFlagSet("tiercache kvtarget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:4420", "TCP address to serve NVMe/TCP on (4420 is the NVMe/TCP I/O port); an address that is not loopback needs -hosts with a secret for every host")
	fs.StringVar(&f.store, "store", "", "file or block device of one emulated KV namespace, NSID 1, every host's (no Namespace Management)")
	fs.StringVar(&f.dir, "dir", "", "directory of the namespaces hosts create with Namespace Management (namespaces.json and one file each)")
	fs.StringVar(&f.nqn, "nqn", tcptarget.DefaultNQN, "subsystem NQN hosts connect to")
	fs.Var(&f.capacity, "capacity", "with -store: the namespace's capacity for a new store file (default 1GiB or the existing size); with -dir: the subsystem's capacity all namespaces share (default 1GiB)")
	fs.IntVar(&f.maxNamespaces, "max-namespaces", 32, "with -dir: the most namespaces (Identify Controller NN)")
	fs.Var(&f.maxValue, "max-value", "largest Store value announced (KVVML), e.g. 128KiB (default 128KiB)")
	fs.StringVar(&f.hosts, "hosts", "", "file of the hosts that may connect, one a line: HOSTNQN [DHHC-1 secret [DHHC-1 controller secret]] (# comments); with secrets it must not be readable by group or others")
	fs.StringVar(&f.hashes, "dhchap-hashes", "sha256,sha384,sha512", "DH-HMAC-CHAP hash functions accepted, in order of preference")
	fs.StringVar(&f.groups, "dhchap-groups", "ffdhe2048,ffdhe3072,ffdhe4096,ffdhe6144,ffdhe8192,null", "DH-HMAC-CHAP DH groups accepted, in order of preference")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments: %q", fs.Args()))
	}
	if (f.store == "") == (f.dir == "") {
		errs = append(errs, errors.New("-store is required, or -dir: one file or block device holding the namespace, or a directory of managed namespaces"))
	}
	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		errs = append(errs, fmt.Errorf("-listen %q: %w", f.listen, err))
	}
	if f.maxNamespaces < 1 || f.maxNamespaces > 1024 {
		errs = append(errs, fmt.Errorf("-max-namespaces %d must be 1..1024", f.maxNamespaces))
	}
	return f, errors.Join(errs...)
}

// authOptions reads -hosts, -dhchap-hashes and -dhchap-groups into the
// target's options.
func (f *kvTargetFlags) authOptions(o *tcptarget.Options) error {
	var errs []error
	for _, s := range strings.Split(f.hashes, ",") {
		h, err := dhchap.ParseHash(strings.TrimSpace(s))
		errs = append(errs, err)
		o.AuthHashes = append(o.AuthHashes, h)
	}
	for _, s := range strings.Split(f.groups, ",") {
		g, err := dhchap.ParseDHGroup(strings.TrimSpace(s))
		errs = append(errs, err)
		o.AuthGroups = append(o.AuthGroups, g)
	}
	if f.hosts != "" {
		hosts, err := readHostsFile(f.hosts)
		errs = append(errs, err)
		o.Hosts = hosts
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if host, _, _ := net.SplitHostPort(f.listen); !isLoopback(host) && !o.AuthRequired() {
		return fmt.Errorf("-listen %s is not a loopback address: any host that reaches it could read, overwrite and delete every namespace; give -hosts FILE with a DH-HMAC-CHAP secret for every host (nvme gen-dhchap-key makes one), or listen on 127.0.0.1", f.listen)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readHostsFile reads the -hosts file: a host NQN a line, optionally its
// DH-HMAC-CHAP secret and controller secret (the representation of
// dhchap.ParseSecret); blank lines and # comments are skipped. A file with
// secrets must be readable by its owner only.
func readHostsFile(path string) ([]tcptarget.HostAuth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-hosts: %w", err)
	}
	var hosts []tcptarget.HostAuth
	var errs []error
	for i, line := range strings.Split(string(b), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) > 3 {
			errs = append(errs, fmt.Errorf("-hosts %s line %d: want HOSTNQN [SECRET [CONTROLLER SECRET]], got %d fields", path, i+1, len(fields)))
			continue
		}
		h := tcptarget.HostAuth{NQN: fields[0]}
		for k, dst := range []**dhchap.Secret{&h.Secret, &h.CtrlSecret} {
			if len(fields) > k+1 {
				s, err := dhchap.ParseSecret(fields[k+1])
				if err != nil {
					errs = append(errs, fmt.Errorf("-hosts %s line %d: %w", path, i+1, err))
					continue
				}
				*dst = &s
			}
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("-hosts %s lists no host", path))
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 && strings.Contains(string(b), "DHHC-1:") {
		errs = append(errs, fmt.Errorf("-hosts %s holds secrets and is readable by group or others (mode %v): chmod 600 it", path, st.Mode().Perm()))
	}
	return hosts, errors.Join(errs...)
}

// dirStore keeps each managed namespace in an emulated namespace file of
// the -dir directory (Strict mode: a full namespace answers Capacity
// Exceeded, as a KV SSD does).
type dirStore struct {
	dir      string
	maxValue int
	log      *zap.Logger
}

// dirRegionBytes is the region size of a namespace file: 1 MiB (so a
// namespace can be as small as 4 MiB); namespaces of 4 GiB or more use
// 4 MiB regions. Both Create and Open derive it from the size.
func dirRegionBytes(size int64) int {
	if size >= 4<<30 {
		return 4 << 20
	}
	return 1 << 20
}

func (s dirStore) path(nsid uint32) string { return filepath.Join(s.dir, fmt.Sprintf("ns%d.kv", nsid)) }

func (s dirStore) Create(nsid uint32, size int64) (nvmekv.Namespace, error) {
	if err := s.Remove(nsid); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return s.Open(nsid, size)
}

func (s dirStore) Open(nsid uint32, size int64) (nvmekv.Namespace, error) {
	return emu.Open(emu.Options{Path: s.path(nsid), Capacity: size, RegionBytes: dirRegionBytes(size),
		MaxValueBytes: s.maxValue, Mode: emu.Strict, Logger: s.log.With(zap.Uint32("nsid", nsid))})
}

func (s dirStore) Remove(nsid uint32) error {
	os.Remove(s.path(nsid) + ".ckpt")
	return os.Remove(s.path(nsid))
}

// cmdKVTarget serves emulated KV namespaces as an NVMe/TCP KV SSD until
// SIGTERM or SIGINT: the Linux nvme-tcp host connects to it and exposes
// each namespace it sees as /dev/ngXnY, the device cold.backend
// passthrough takes. With -store one namespace (NSID 1) is every host's;
// with -dir hosts create, attach, detach and delete namespaces with
// Namespace Management (`tiercache ns`, nvme-cli). The namespaces run in
// Strict mode (a full device answers Capacity Exceeded, as a KV SSD does,
// instead of dropping old records).
func cmdKVTarget(args []string, stdout, stderr io.Writer) int {
	f, err := parseKVTargetFlags(args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	opts := tcptarget.Options{NQN: f.nqn, MaxValueBytes: int(f.maxValue)}
	if err := f.authOptions(&opts); err != nil {
		return exitCode(err, stderr)
	}
	log, tty := newTermLogger(LoggingConfig{Level: f.logLevel, Format: "auto"}, stderr)
	defer log.Sync()
	opts.Logger = log
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	var ns *emu.Namespace
	what := ""
	if f.store != "" {
		// Opening a big store rebuilds its index: a status line on a
		// terminal, a log line a second otherwise (C14).
		ld := newLoadReport(log, "store", progressOut{tty: tty})
		ns, err = emu.Open(emu.Options{Path: f.store, Capacity: int64(f.capacity), Mode: emu.Strict, Logger: log, Progress: ld.report})
		ld.end(err)
		if err != nil {
			return exitCode(fmt.Errorf("open the KV namespace: %w", err), stderr)
		}
		opts.Namespace = ns
		what = fmt.Sprintf("NSID 1, KV command set, from %s (%d bytes)", f.store, ns.Limits().Capacity)
	} else {
		if err := os.MkdirAll(f.dir, 0o700); err != nil {
			return exitCode(fmt.Errorf("-dir: %w", err), stderr)
		}
		capacity := int64(f.capacity)
		if capacity == 0 {
			capacity = 1 << 30
		}
		maxValue := int(f.maxValue)
		if maxValue == 0 {
			maxValue = 128 << 10
		}
		opts.Namespaces = &tcptarget.NamespaceOptions{Store: dirStore{dir: f.dir, maxValue: maxValue, log: log},
			StatePath: filepath.Join(f.dir, "namespaces.json"), Capacity: capacity, MaxNamespaces: f.maxNamespaces}
		what = fmt.Sprintf("Namespace Management, KV namespaces in %s, capacity %d bytes", f.dir, capacity)
	}
	closeNS := func() error {
		if ns != nil {
			return ns.Close()
		}
		return nil
	}
	tg, err := tcptarget.New(opts)
	if err != nil {
		closeNS()
		return exitCode(err, stderr)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		tg.Close()
		closeNS()
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
	auth := "any host, no authentication (loopback only)"
	if len(opts.Hosts) > 0 {
		auth = fmt.Sprintf("%d hosts", len(opts.Hosts))
		if opts.AuthRequired() {
			auth += ", DH-HMAC-CHAP required"
		}
	}
	fmt.Fprintf(stdout, "tiercache kvtarget: serving %s (%s) on %s (%s)\n", tg.NQN(), what, ln.Addr(), auth)
	return awaitShutdown(sigs, func() error {
		err := tg.Close()
		<-served
		st := tg.Stats()
		log.Info("kvtarget stopped", zap.Uint64("connections", st.Connections), zap.Uint64("hosts_refused", st.HostsRefused),
			zap.Uint64("auth_ok", st.AuthOK), zap.Uint64("auth_failed", st.AuthFailed), zap.Uint64("auth_missing", st.AuthMissing),
			zap.Uint64("auth_required_refusals", st.AuthRequired))
		return errors.Join(err, closeNS())
	}, log)
}
