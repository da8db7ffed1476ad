package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// cmdProbe is `tiercache probe live|ready`, for Kubernetes exec probes and
// scripts: live succeeds when the sidecar answers PING with PONG (it does
// while it loads), ready when INFO says loading:0, i.e. its cache is open
// and data commands run. It reaches the sidecar as serve would be told
// to listen: the same -config, TIERCACHE_CONFIG and TIERCACHE_* variables,
// or -socket; over TCP (server.tcp, no socket) and with unix_auth it
// AUTHs with server.requirepass. Exit 0 on success, 1 with one line on
// stderr saying why not, 2 for bad usage (C16).
func cmdProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tiercache probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML config file (default: $TIERCACHE_CONFIG, else the embedded defaults)")
	sock := fs.String("socket", "", "Unix socket to probe (default: server.socket)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tiercache probe [-config FILE] [-socket PATH] [-timeout 2s] live|ready")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || (fs.Arg(0) != "live" && fs.Arg(0) != "ready") {
		fmt.Fprintf(stderr, "tiercache probe: want live or ready, got %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	cfg, err := probeConfig(*cfgPath, *sock)
	if err != nil {
		fmt.Fprintln(stderr, "tiercache probe:", err)
		return 2
	}
	msg, err := probe(cfg, fs.Arg(0), *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "tiercache probe %s: %v\n", fs.Arg(0), err)
		return 1
	}
	fmt.Fprintln(stdout, msg)
	return 0
}

// probeConfig is serve's configuration as far as the probe needs it.
func probeConfig(path, sock string) (*Config, error) {
	cfg := defaultConfig()
	if path == "" {
		path = os.Getenv("TIERCACHE_CONFIG")
	}
	if path != "" {
		if err := cfg.loadFile(path); err != nil {
			return nil, err
		}
	}
	if errs := cfg.applyEnv(os.Environ()); len(errs) > 0 {
		return nil, &configError{errs: errs}
	}
	if sock != "" {
		cfg.Server.Socket = sock
	}
	if cfg.Server.Socket == "" && cfg.Server.TCP == "" {
		return nil, errors.New("server.socket and server.tcp are both empty: nothing to probe")
	}
	return &cfg, nil
}

// probe runs one check against the sidecar cfg describes.
func probe(cfg *Config, what string, timeout time.Duration) (string, error) {
	network, addr, auth := "unix", cfg.Server.Socket, cfg.Server.UnixAuth
	if addr == "" {
		network, addr, auth = "tcp", cfg.Server.TCP, true
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	rd := bufio.NewReader(c)
	if auth && cfg.Server.RequirePass != "" {
		if r, err := roundTrip(c, rd, "AUTH", cfg.Server.RequirePass); err != nil || r != "OK" {
			return "", fmt.Errorf("AUTH: %q %v", r, err)
		}
	}
	if what == "live" {
		r, err := roundTrip(c, rd, "PING")
		if err != nil {
			return "", fmt.Errorf("PING: %w", err)
		}
		if r != "PONG" {
			return "", fmt.Errorf("PING answered %q", r)
		}
		return "live: PONG from " + network + ":" + addr, nil
	}
	info, err := roundTrip(c, rd, "INFO", "persistence")
	if err != nil {
		return "", fmt.Errorf("INFO persistence: %w", err)
	}
	fields := infoFields(info)
	if fields["loading"] != "0" {
		return "", fmt.Errorf("loading:%s (%s%% of the %s, %s keys, %s s)", fields["loading"], fields["loading_loaded_perc"],
			fields["loading_method"], fields["loading_loaded_keys"], fields["loading_elapsed_seconds"])
	}
	return "ready: loading:0 on " + network + ":" + addr, nil
}

// infoFields parses INFO's "name:value" lines.
func infoFields(info string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// roundTrip sends one command as a RESP array and reads a simple string,
// an error or a bulk string back: all a probe needs.
func roundTrip(w io.Writer, rd *bufio.Reader, args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return "", err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 || n > 1<<20 {
			return "", fmt.Errorf("bad bulk length %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}
