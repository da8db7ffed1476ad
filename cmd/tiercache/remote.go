package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/backend"
	"github.com/tiercache/tiercache/behind"
	"github.com/tiercache/tiercache/remote"
	"github.com/tiercache/tiercache/tier"
)

// buildRemote turns the remote section into the tier's OpenRemote and
// RemoteOptions (nothing without addrs); it returns every problem.
func (c *Config) buildRemote(to *tier.Options, log *zap.Logger) []error {
	r := c.Remote
	if len(r.Addrs) == 0 {
		return nil
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	rc := remote.Config{Addrs: r.Addrs, Username: r.Username, Password: r.Password, Prefix: r.Prefix,
		Timeout: time.Duration(r.Timeout), DialTimeout: time.Duration(r.DialTimeout), ChunkBytes: int(min(r.ChunkBytes, 1<<40)), Logger: log}
	if r.TLS.Enabled {
		cfg, err := r.TLS.config()
		if err != nil {
			errs = append(errs, err)
		}
		rc.TLS = cfg
	} else if t := r.TLS; t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify {
		// Settings for a TLS that would not be used: the connections would
		// go in clear text to a deployment that meant them encrypted.
		bad("remote.tls has files or settings but remote.tls.enabled is false: the remote would be reached without TLS (set enabled: true, or remove them)")
	}
	rc.EnsureDefaults()
	if err := rc.Validate(); err != nil {
		errs = append(errs, err) // each line names remote (ErrInvalidConfig)
	}
	ro := tier.RemoteOptions{Wait: time.Duration(r.Wait), Queue: behind.Options{QueueItems: r.QueueItems,
		QueueBytes: int64(min(r.QueueBytes, 1<<50)), BatchItems: r.BatchItems, BatchDelay: time.Duration(r.BatchDelay)}}
	switch r.Write {
	case "behind":
	case "through":
		ro.WriteThrough = true
	default:
		bad("remote.write %q is not behind or through", r.Write)
	}
	switch r.Resync {
	case "revalidate":
	case "keep":
		ro.KeepOnResync = true
	default:
		bad("remote.resync %q is not revalidate or keep", r.Resync)
	}
	if r.Wait < 0 || time.Duration(r.Wait) > time.Minute {
		bad("remote.wait %v is outside [0, 1m]", time.Duration(r.Wait))
	}
	if r.QueueItems < 0 || r.BatchItems < 0 || r.BatchDelay < 0 {
		bad("remote.queue_items, batch_items and batch_delay must not be negative")
	}
	to.OpenRemote = func(p backend.Params) (backend.Shared, error) { return remote.Open(rc, p) }
	to.Remote = ro
	return errs
}

// config loads the TLS files.
func (t RemoteTLSConfig) config() (*tls.Config, error) {
	cfg := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("remote.tls.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("remote.tls.ca_file %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("remote.tls.cert_file and key_file go together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("remote.tls: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
