package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tiercache/tiercache/server"
)

// TestStatusPage (C18): the metrics listener serves the status page at
// GET / (HTML with no external asset, under a CSP that forbids any) and
// its data at GET /status.json, whose every number is INFO's, taken on a
// quiet sidecar with tenants; other paths are 404 and /metrics is as
// before.
func TestStatusPage(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Tenants = []TenantConfig{{Name: "rag", Prefix: "rag:", Quota: 4 << 20}}
	sc := startTestSidecar(t, cfg)
	base := "http://" + sc.httpLn.Addr().String()
	ctx := context.Background()
	rc := newClient(t, sc, 2)
	for i := range 100 {
		rc.Set(ctx, "rag:"+strconv.Itoa(i), strings.Repeat("v", i), 0)
		rc.Set(ctx, "k"+strconv.Itoa(i), i, 0)
		rc.Get(ctx, "rag:"+strconv.Itoa(i*2))
	}

	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	resp, page := get("/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("GET /: Content-Security-Policy %q lets the page load from elsewhere", csp)
	}
	for _, ext := range []string{"http:", "https:", "src=", "href=", "@import", "url(", "<link", "<iframe"} {
		if strings.Contains(strings.ToLower(string(page)), ext) {
			t.Errorf("the status page has %q: it must be self-contained", ext)
		}
	}
	for _, c := range []struct {
		path string
		code int
	}{{"/unknown", 404}, {"/status.json/x", 404}, {"/metrics", 200}} {
		if resp, _ := get(c.path); resp.StatusCode != c.code {
			t.Errorf("GET %s: %s, want %d", c.path, resp.Status, c.code)
		}
	}
	if resp, body := get("/metrics"); !strings.Contains(string(body), "\ntiercache_keys ") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("GET /metrics: %s, no tiercache_keys", resp.Header.Get("Content-Type"))
	}
	if resp, err := http.Post(base+"/", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %v %v, want 405", resp, err)
	}

	before := infoSnapshot(t, rc)
	resp, body := get("/status.json")
	after := infoSnapshot(t, rc)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET /status.json: Content-Type %q", ct)
	}
	var doc statusDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("status.json: %v\n%s", err, body)
	}
	if doc.Loading || len(doc.Tiers) != 3 || len(doc.Tenants) != 2 {
		t.Errorf("status.json: loading %v, %d tiers, %d tenants; want serving, 3, 2", doc.Loading, len(doc.Tiers), len(doc.Tenants))
	}
	checkShownAgainstInfo(t, flattenStatus(doc), before, after, true)
}

// infoSnapshot is INFO everything as field → value, each tenant line's
// keys as tenant_<name>:<key>.
func infoSnapshot(t testing.TB, rc *redis.Client) map[string]string {
	t.Helper()
	sections, err := rc.InfoMap(context.Background(), "everything").Result()
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	info := map[string]string{}
	for sec, fields := range sections {
		for k, v := range fields {
			if strings.EqualFold(sec, "tenants") {
				for kv := range strings.SplitSeq(v, ",") {
					key, val, _ := strings.Cut(kv, "=")
					info[k+":"+key] = val
				}
				continue
			}
			info[k] = v
		}
	}
	return info
}

// flattenStatus names each value of a status.json document by its INFO
// field (tier_<tier>_<key>, tenant_<name>:<key>).
func flattenStatus(doc statusDoc) map[string]string {
	out := map[string]string{}
	str := func(v any) string {
		switch v := v.(type) {
		case string:
			return v
		case json.Number:
			return v.String()
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for k, v := range doc.Fields {
		out[k] = str(v)
	}
	for k, v := range doc.Memory {
		out[k] = str(v)
	}
	for _, g := range doc.Tiers {
		for k, v := range g {
			if k != "name" {
				out["tier_"+str(g["name"])+"_"+k] = str(v)
			}
		}
	}
	for _, g := range doc.Tenants {
		for k, v := range g {
			if k != "name" {
				out["tenant_"+str(g["name"])+":"+k] = str(v)
			}
		}
	}
	return out
}

// statRowOf is the stats table's row of an INFO field (a per-tier
// field by its tier's, a per-tenant key by its tenant's), or nil for a
// field of no row (INFO memory's).
func statRowOf(field string) *server.Stat {
	for _, r := range server.StatTable() {
		switch r.Label {
		case server.TierLabel:
			if rest, ok := strings.CutPrefix(field, "tier_"); ok {
				if _, info, ok := strings.Cut(rest, "_"); ok && info == r.Info {
					return &r
				}
			}
		case server.TenantLabel:
			if strings.HasPrefix(field, "tenant_") && strings.HasSuffix(field, ":"+r.Info) {
				return &r
			}
		default:
			if field == r.Info {
				return &r
			}
		}
	}
	return nil
}

// fixedGauges are the gauges the configuration fixes: equal to INFO's
// even under load.
var fixedGauges = map[string]bool{"quota_bytes": true, "capacity_bytes": true, "dram_capacity_bytes": true,
	"tier_hot_budget": true, "tier_warm_arena": true, "maxmemory": true, "tier_sketch_bytes": true,
	"warm_numa_node": true, "cold_index_numa_node": true, "loading": true, "cold_writable": true}

// checkShownAgainstInfo checks the values a status page showed (INFO
// field → value) against INFO taken before and after it: every field of
// the stats table INFO has is shown; a counter lies between its INFO
// values before and after; a text, a fixed gauge and (exact: the sidecar
// was quiet) every gauge but the RSS and the instantaneous rates equals
// INFO's.
func checkShownAgainstInfo(t *testing.T, shown, before, after map[string]string, exact bool) {
	t.Helper()
	for field := range after {
		if _, ok := shown[field]; !ok && statRowOf(field) != nil {
			t.Errorf("INFO %s:%s is not shown", field, after[field])
		}
	}
	t.Logf("%d values shown, checked against INFO", len(shown))
	for field, v := range shown {
		b, okb := before[field]
		a, oka := after[field]
		if !okb || !oka {
			t.Errorf("shown %s=%s is no INFO field", field, v)
			continue
		}
		r := statRowOf(field)
		if r != nil && r.Kind == server.StatText {
			if v != b && v != a {
				t.Errorf("%s: shown %q, INFO %q before and %q after", field, v, b, a)
			}
			continue
		}
		fv, err1 := strconv.ParseFloat(v, 64)
		fb, err2 := strconv.ParseFloat(b, 64)
		fa, err3 := strconv.ParseFloat(a, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Errorf("%s: shown %q, INFO %q and %q: not numbers", field, v, b, a)
			continue
		}
		key := field
		if r != nil {
			key = r.Info
		}
		switch {
		case r != nil && r.Kind == server.StatCounter:
			if fv < fb || fv > fa {
				t.Errorf("counter %s: shown %v, not between INFO's %v before and %v after", field, fv, fb, fa)
			}
		case field == "used_memory_rss", strings.HasPrefix(field, "instantaneous_"): // sampled rates: the INFOs themselves move them
		case exact || fixedGauges[key]:
			if fv != fb && fv != fa {
				t.Errorf("gauge %s: shown %v, INFO %v before and %v after", field, fv, fb, fa)
			}
		}
	}
}

// TestStatusPageWhileLoading (C18, C9): while the cache opens, the status
// page is served and /status.json says loading, with the server's rows
// only (the cache's are not there yet), as INFO says loading:1.
func TestStatusPageWhileLoading(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Metrics.Listen = "127.0.0.1:" + strconv.Itoa(freePort(t))
	opening, release := make(chan struct{}), make(chan struct{})
	res := make(chan started, 1)
	go func() {
		sc, err := startSidecarOpening(cfg, nopLogger(), heldOpen(opening, release, nil))
		res <- started{sc, err}
	}()
	waitFor(t, "the open to begin", opening)
	for _, path := range []string{"/", "/status.json"} {
		resp, err := http.Get("http://" + cfg.Metrics.Listen + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc statusDoc
		if path == "/status.json" {
			err = json.NewDecoder(resp.Body).Decode(&doc)
			if err != nil || !doc.Loading || len(doc.Tiers) != 0 || fmt.Sprint(doc.Fields["loading"]) != "1" {
				t.Errorf("status.json while loading: loading %v, fields[loading] %v, %d tiers, %v", doc.Loading, doc.Fields["loading"], len(doc.Tiers), err)
			}
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s while loading: %s", path, resp.Status)
		}
	}
	close(release)
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := r.sc.Close(); err != nil {
		t.Error(err)
	}
}
