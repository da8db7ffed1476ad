package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	sub := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "serve":
		return cmdServe(args, stdout, stderr)
	case "numa":
		return cmdNuma(args, stdout, stderr)
	case "kvtarget":
		return cmdKVTarget(args, stdout, stderr)
	case "ns":
		return cmdNS(args, stdout, stderr)
	case "tenant":
		return cmdTenant(args, stdout, stderr)
	case "probe":
		return cmdProbe(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "tiercache", version)
		return 0
	case "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "tiercache: unknown subcommand %q\n", sub)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: tiercache [serve] [flags]   run the sidecar (default)
       tiercache numa [-config FILE]  print the NUMA topology and the warm node
       tiercache kvtarget -store PATH | -dir DIR [-listen 127.0.0.1:4420] [-hosts FILE]
                                     serve emulated KV namespaces as an NVMe/TCP KV SSD
       tiercache ns list|create|delete|claim|forget -ctrl /dev/nvmeX ...
                                     manage a KV SSD's namespaces (Namespace Management)
       tiercache tenant list|drop NAME [-config FILE]
                                     the tenants' cold namespaces; delete one (sidecar stopped)
       tiercache probe live|ready    exit 0 if the sidecar answers PING / has its cache loaded
       tiercache version             print the version
Run "tiercache serve -h" for the flags. Config reference: configs/tiercache.yaml.
`)
}

// loadConfig applies defaults, the config file, the environment and flags,
// in that order. Every bad value found is reported together.
func loadConfig(name string, args []string, environ []string, stderr io.Writer) (*Config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("tiercache "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "YAML config file (default: $TIERCACHE_CONFIG, else the embedded defaults)")
	// Flags are parsed into a scratch config and applied after the file and env.
	var fl Config
	fs.StringVar(&fl.Server.Socket, "socket", "", "Unix socket path (server.socket)")
	fs.StringVar(&fl.Server.TCP, "tcp", "", "TCP listen address, needs -requirepass (server.tcp)")
	fs.StringVar(&fl.Server.RequirePass, "requirepass", "", "AUTH password (server.requirepass)")
	fs.StringVar(&fl.Cold.DataDir, "data", "", "data directory of the emulated cold store (cold.data_dir)")
	fs.StringVar(&fl.Cold.Backend, "cold", "", "cold backend: emulated, nvme, passthrough or none (cold.backend)")
	fs.StringVar(&fl.Cold.Device, "device", "", "char device for nvme and passthrough, e.g. /dev/ng0n1 (cold.device)")
	fs.StringVar(&fl.Durability, "durability", "", "cache, drain or writethrough (durability)")
	fs.StringVar(&fl.Warm.Node, "warm-node", "", "warm NUMA node: auto, unbound or an id (warm.node)")
	fs.IntVar(&fl.Server.Procs, "procs", 0, "CPUs that run Go code at once (GOMAXPROCS); 0 = all the process may use (server.procs)")
	fs.Var(&fl.Hot.Bytes, "hot-bytes", "hot tier size, e.g. 256MiB (hot.bytes)")
	fs.Var(&fl.Warm.Bytes, "warm-bytes", "warm arena size, 0 disables (warm.bytes)")
	fs.StringVar(&fl.Metrics.Listen, "metrics", "", `Prometheus listen address, "off" disables (metrics.listen)`)
	fs.StringVar(&fl.Logging.Level, "log-level", "", "debug, info, warn or error (logging.level)")
	fs.StringVar(&fl.Logging.Format, "log-format", "", "auto, json or console (logging.format)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *path == "" {
		*path = envValue(environ, "TIERCACHE_CONFIG")
	}
	if *path != "" {
		if err := cfg.loadFile(*path); err != nil {
			return nil, err
		}
	}
	if errs := cfg.applyEnv(environ); len(errs) > 0 {
		return nil, &configError{errs: errs}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	apply := func(flagName string, dst *string, v string) {
		if set[flagName] {
			*dst = v
		}
	}
	apply("socket", &cfg.Server.Socket, fl.Server.Socket)
	apply("tcp", &cfg.Server.TCP, fl.Server.TCP)
	apply("requirepass", &cfg.Server.RequirePass, fl.Server.RequirePass)
	apply("data", &cfg.Cold.DataDir, fl.Cold.DataDir)
	apply("cold", &cfg.Cold.Backend, fl.Cold.Backend)
	apply("device", &cfg.Cold.Device, fl.Cold.Device)
	apply("durability", &cfg.Durability, fl.Durability)
	apply("warm-node", &cfg.Warm.Node, fl.Warm.Node)
	apply("metrics", &cfg.Metrics.Listen, fl.Metrics.Listen)
	apply("log-level", &cfg.Logging.Level, fl.Logging.Level)
	apply("log-format", &cfg.Logging.Format, fl.Logging.Format)
	if set["procs"] {
		cfg.Server.Procs = fl.Server.Procs
	}
	if set["hot-bytes"] {
		cfg.Hot.Bytes = fl.Hot.Bytes
	}
	if set["warm-bytes"] {
		cfg.Warm.Bytes = fl.Warm.Bytes
	}
	if cfg.Metrics.Listen == "off" {
		cfg.Metrics.Listen = ""
	}
	return &cfg, nil
}

func envValue(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

func exitCode(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "tiercache:", err)
	return 1
}
