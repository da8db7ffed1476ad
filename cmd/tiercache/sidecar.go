package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/tiercache/tiercache/nvmekv/emu"
	"github.com/tiercache/tiercache/server"
	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/uring"
)

// sidecar is a running tiercache: cache, RESP server and metrics endpoint.
type sidecar struct {
	cfg     *Config
	log     *zap.Logger
	cache   *tier.Cache
	srv     *server.Server
	met     *metrics
	httpSrv *http.Server
	httpLn  net.Listener
	httpErr chan error
	passed  bool // serving sockets the service manager passed (C12)

	closeOnce sync.Once
	closeErr  error
}

// openCacheError wraps tier.Open's error. Only the cold tier needs
// io_uring, so where io_uring is unavailable it says how to run without.
func openCacheError(err error) error {
	if errors.Is(err, uring.ErrUnavailable) {
		return fmt.Errorf("open cache: %w (without io_uring, -cold none or cold.backend: none serves the hot and warm "+
			"tiers alone, with durability cache: nothing outlives the process)", err)
	}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("open cache: %w (the emulated cold store reserves cold.capacity on disk: lower it, e.g. "+
			"TIERCACHE_COLD_CAPACITY=256MiB, or point -data at a larger filesystem)", err)
	}
	return fmt.Errorf("open cache: %w", err)
}

// startSidecar opens the metrics listener and the RESP listeners, then
// the cache, and returns once the cache is open. Meanwhile the server is
// loading (server.NewLoading: PING and INFO answer, commands that touch
// data answer -LOADING) and the log says every second how far the open
// got (loadReport, C9). On any failure it closes what it opened: clients
// connected while loading see their connection closed.
func startSidecar(cfg *Config, log *zap.Logger) (*sidecar, error) {
	return startSidecarWith(cfg, log, startEnv{})
}

// startSidecarOpening is startSidecar with the function that opens the
// cache: tier.Open, or a test seam that holds the open back
// (TestLoadingSidecar).
func startSidecarOpening(cfg *Config, log *zap.Logger, openCache openFunc) (*sidecar, error) {
	return startSidecarWith(cfg, log, startEnv{open: openCache})
}

// startEnv is what the process brings to startSidecar beside its
// configuration: the sockets systemd passed (served instead of
// server.socket and server.tcp, C12), where the open's progress shows
// (C13, C14), and the function that opens the cache (tier.Open when nil).
type startEnv struct {
	passed *activation
	out    progressOut
	open   openFunc
	// shutdown is what the SHUTDOWN command calls (server.Options.
	// Shutdown); nil: SHUTDOWN answers an error.
	shutdown func()
}

// openFunc opens the cache from its options; progress is what the cold
// store's open reports to (a test seam may report through it itself).
type openFunc func(o tier.Options, progress func(emu.Progress)) (*tier.Cache, error)

func startSidecarWith(cfg *Config, log *zap.Logger, env startEnv) (*sidecar, error) {
	openCache := env.open
	if openCache == nil {
		openCache = func(o tier.Options, _ func(emu.Progress)) (*tier.Cache, error) { return tier.Open(o) }
	}
	bc := *cfg
	bc.passed = env.passed
	b, err := bc.build(log)
	if err != nil {
		return nil, err
	}
	b.server.Shutdown = env.shutdown
	if cfg.Server.Procs > 0 {
		runtime.GOMAXPROCS(cfg.Server.Procs)
	}
	s := &sidecar{cfg: cfg, log: log, met: newMetrics(), httpErr: make(chan error, 1), passed: env.passed != nil}
	if cfg.Metrics.Listen != "" {
		b.server.ObserveLatency = s.met.observe // no histograms when nobody scrapes (the slow log may still time commands)
	}
	if cfg.Cold.Backend == "emulated" && cfg.Cold.DataDir != "" {
		if err := os.MkdirAll(cfg.Cold.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
	}
	ld := newLoadReport(log, "cache", env.out)
	if b.cold != nil {
		b.cold.Progress = ld.report
	}
	if s.srv, err = server.NewLoading(b.server, ld.progress); err != nil {
		ld.end(err)
		return nil, err
	}
	if cfg.Metrics.Listen != "" {
		if s.httpLn, err = net.Listen("tcp", cfg.Metrics.Listen); err != nil {
			ld.end(err)
			s.srv.Close()
			return nil, metricsListenError(cfg.Metrics.Listen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(s.met.reg, promhttp.HandlerOpts{}))
		s.met.handleStatus(mux, version)
		if cfg.Metrics.Pprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		s.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { s.httpErr <- s.httpSrv.Serve(s.httpLn) }()
	}
	s.met.attach(s.srv)
	if err := s.srv.Start(); err != nil {
		ld.end(err)
		s.closeStarted()
		return nil, err
	}
	s.cache, err = openCache(b.tier, ld.report)
	ld.end(err)
	if err != nil {
		s.closeStarted()
		return nil, openCacheError(err)
	}
	if err := s.srv.Loaded(s.cache); err != nil { // only a bug: the server was made loading
		s.closeStarted()
		return nil, errors.Join(err, s.cache.Close())
	}
	s.met.attachCache(s.cache)
	procMemLimit.add(s.cache, b.memLimit, log)
	return s, nil
}

// closeStarted closes what startSidecar started before the cache was
// open: the RESP server (its clients' connections too), then the metrics
// endpoint.
func (s *sidecar) closeStarted() {
	s.srv.Close()
	s.closeMetrics()
	s.met.attach(nil)
}

// describe is the one line printed at start: what is bound where.
func (s *sidecar) describe() string {
	var parts []string
	for _, a := range s.srv.Addrs() {
		switch {
		case a.Network() == "unix" && s.passed:
			parts = append(parts, fmt.Sprintf("serving unix:%s (passed by the service manager)", a.String()))
		case a.Network() == "unix":
			parts = append(parts, fmt.Sprintf("serving unix:%s (mode %s)", a.String(), s.cfg.Server.SocketMode))
		default:
			parts = append(parts, fmt.Sprintf("tcp:%s (AUTH required)", a.String()))
		}
	}
	st := s.cache.Stats()
	parts = append(parts, fmt.Sprintf("hot %v DRAM", s.cfg.Hot.Bytes))
	for _, l := range st.Tiers {
		switch l.Name {
		case "warm":
			if st.WarmNode >= 0 {
				parts = append(parts, fmt.Sprintf("warm %v on NUMA node %d (placement %.2f)", s.cfg.Warm.Bytes, st.WarmNode, st.WarmPlacement))
			} else {
				parts = append(parts, fmt.Sprintf("warm %v unbound", s.cfg.Warm.Bytes))
			}
		case "cold":
			parts = append(parts, fmt.Sprintf("cold %s (%v free)", st.ColdBackend, ByteSize(st.ColdFreeBytes)))
			if st.ColdIndexNode >= 0 {
				parts = append(parts, fmt.Sprintf("cold index on NUMA node %d (its off-heap tables)", st.ColdIndexNode))
			}
		}
	}
	if len(st.Tiers) < 3 {
		parts = append(parts, "tiers "+tierNames(st.Tiers))
	}
	parts = append(parts, "durability "+s.cfg.Durability, fmt.Sprintf("%d procs", runtime.GOMAXPROCS(0)))
	if s.httpLn != nil {
		parts = append(parts, "metrics http://"+s.httpLn.Addr().String()+"/metrics")
	}
	return "tiercache " + version + ": " + strings.Join(parts, "; ")
}

func tierNames(ls []tier.TierLevel) string {
	var n []string
	for _, l := range ls {
		n = append(n, l.Name)
	}
	return strings.Join(n, "+")
}

func (s *sidecar) closeMetrics() error {
	if s.httpSrv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.httpSrv.Shutdown(ctx)
	if e := <-s.httpErr; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}

// Close shuts down in order: RESP listeners, then connections (each
// finishes its command), then the metrics endpoint, then the cache (which
// drains the flusher, then closes the ring, the arenas and the device).
// It is idempotent.
func (s *sidecar) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if err := s.srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("server: %w", err))
		}
		if err := s.closeMetrics(); err != nil {
			errs = append(errs, fmt.Errorf("metrics: %w", err))
		}
		s.met.attach(nil)
		procMemLimit.remove(s.cache)
		if err := s.cache.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cache: %w", err))
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// cmdServe runs the sidecar until SIGTERM, SIGINT or the SHUTDOWN command;
// a second signal forces the exit. Under systemd it serves the sockets passed to it
// (C12) and tells the manager when it is loaded and when it stops (C13).
func cmdServe(args []string, stdout, stderr io.Writer) int {
	cfg, err := loadConfig("serve", args, os.Environ(), stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	note, err := newNotifier()
	if err != nil {
		return exitCode(err, stderr)
	}
	defer note.close()
	passed, err := socketActivation()
	if err != nil {
		note.failed(err)
		return exitCode(err, stderr)
	}
	// The configuration is checked with the passed sockets in place of
	// server.socket and server.tcp (a passed TCP socket is cluster mode's
	// TCP listener, C20).
	check := *cfg
	check.passed = passed
	if _, err := check.build(zap.NewNop()); err != nil {
		if passed != nil {
			passed.close()
		}
		note.failed(err)
		return exitCode(err, stderr)
	}
	log, tty := newTermLogger(cfg.Logging, stderr)
	defer log.Sync()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	var once sync.Once // a second SHUTDOWN does not force the exit as a second signal does
	shutdown := func() {
		once.Do(func() {
			select {
			case sigs <- shutdownCommand{}: // as a SIGTERM
			default: // two signals are queued already
			}
		})
	}
	sc, err := startSidecarWith(cfg, log, startEnv{passed: passed, out: progressOut{tty: tty, notify: note}, shutdown: shutdown})
	if err != nil {
		note.failed(err)
		return exitCode(err, stderr)
	}
	line := sc.describe()
	fmt.Fprintln(stdout, line)
	note.ready(line)
	return awaitShutdown(sigs, func() error {
		note.stopping("shutting down: closing connections, then the cache")
		return sc.Close()
	}, log)
}

// shutdownCommand is the SHUTDOWN command's request to stop, sent to
// awaitShutdown as a signal is.
type shutdownCommand struct{}

func (shutdownCommand) String() string { return "SHUTDOWN command" }
func (shutdownCommand) Signal()        {}

// awaitShutdown waits for a signal, then runs closeFn; a second signal
// before closeFn returns gives up on it and returns 2.
func awaitShutdown(sigs <-chan os.Signal, closeFn func() error, log *zap.Logger) int {
	sig := <-sigs
	log.Info("shutting down", zap.String("signal", sig.String()))
	done := make(chan error, 1)
	go func() { done <- closeFn() }()
	select {
	case err := <-done:
		if err != nil {
			log.Error("shutdown", zap.Error(err))
			return 1
		}
		log.Info("shut down cleanly")
		return 0
	case sig := <-sigs:
		log.Error("second signal: exiting without finishing the shutdown", zap.String("signal", sig.String()))
		_ = log.Sync()
		return 2
	}
}
