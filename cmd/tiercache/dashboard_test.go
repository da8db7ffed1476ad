package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	dashboardFile = "../../deploy/grafana/tiercache.json"
	rulesFile     = "../../deploy/prometheus/tiercache-rules.yml"
	// remoteRow is the title of the dashboard's collapsed row of the
	// remote tier's panels.
	remoteRow = "Remote tier (needs a remote tier: tiercache_remote_*)"
)

// remotePanels are the dashboard's panels that need a remote tier: while
// the sidecar has none they are only parsed by Prometheus; once INFO shows
// one (a tier_remote_* or remote_* field), they must return data like the
// rest. TestDashboardThroughPrometheus checks that this list is exactly
// the panels of remoteRow and those whose queries name tiercache_remote_*.
var remotePanels = []string{
	"Remote hit ratio", "Remote errors and timeouts", "Remote breaker", "Remote write queue", "Remote bytes",
	"Remote latency",
}

// grafanaDashboard is what the test reads of a dashboard.
type grafanaDashboard struct {
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Collapsed  bool           `json:"collapsed"`
	Datasource map[string]any `json:"datasource"`
	GridPos    map[string]int `json:"gridPos"`
	Panels     []grafanaPanel `json:"panels"`
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// grafanaVars are Grafana's variables as the test substitutes them: the
// rate interval is 10 s (at least four of the test's 1 s scrapes, as
// Grafana's $__rate_interval is), $instance the sidecar's target, escaped
// as Grafana escapes a regex variable in a PromQL string.
func grafanaVars(expr, instance string) string {
	re := strings.ReplaceAll(regexp.QuoteMeta(instance), `\`, `\\`)
	return strings.NewReplacer("$__rate_interval", "10s", "$__interval", "2s", "$__range", "1m",
		"${instance}", re, "$instance", re).Replace(expr)
}

// loadDashboard reads the dashboard and checks what Grafana 10 and 11 need
// to import it with a datasource variable: a uid, schema version, the
// datasource and instance variables, every panel on ${datasource} with a
// unique id and a place on the grid, every query with a refId. It
// returns the panels that are no rows, the remote row's included.
func loadDashboard(t *testing.T) (grafanaDashboard, []grafanaPanel) {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("dashboard uid %q, title %q, schemaVersion %d: want both and a Grafana 10 schema (>= 36)", d.UID, d.Title, d.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" || vars["instance"] != "query" {
		t.Errorf("dashboard variables %v: want datasource (a datasource variable) and instance (a query)", vars)
	}
	ids := map[int]bool{}
	var panels []grafanaPanel
	var walk func(ps []grafanaPanel, row string)
	walk = func(ps []grafanaPanel, row string) {
		for _, p := range ps {
			if ids[p.ID] || p.ID == 0 {
				t.Errorf("panel %q: id %d is zero or not unique", p.Title, p.ID)
			}
			ids[p.ID] = true
			if p.GridPos["w"] == 0 || p.GridPos["h"] == 0 {
				t.Errorf("panel %q has no size on the grid", p.Title)
			}
			if p.Type == "row" {
				if p.Collapsed != (p.Title == remoteRow) {
					t.Errorf("row %q: collapsed %v; only the remote tier's row is collapsed", p.Title, p.Collapsed)
				}
				walk(p.Panels, p.Title)
				continue
			}
			if p.Collapsed || len(p.Panels) > 0 {
				t.Errorf("panel %q holds panels", p.Title)
			}
			if p.Datasource["uid"] != "${datasource}" {
				t.Errorf("panel %q: datasource %v, want uid ${datasource}", p.Title, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, q := range p.Targets {
				if q.RefID == "" || q.Expr == "" {
					t.Errorf("panel %q: a query without refId or expr", p.Title)
				}
			}
			if (row == remoteRow) != slices.Contains(remotePanels, p.Title) {
				t.Errorf("panel %q: in row %q; remotePanels and the remote row must hold the same panels", p.Title, row)
			}
			if slices.ContainsFunc(p.Targets, func(q struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			}) bool {
				return strings.Contains(q.Expr, "tiercache_remote_")
			}) != slices.Contains(remotePanels, p.Title) {
				t.Errorf("panel %q: its queries and remotePanels disagree on whether it needs a remote tier", p.Title)
			}
			panels = append(panels, p)
		}
	}
	walk(d.Panels, "")
	return d, panels
}

// promServer is a Prometheus server of the test's own.
type promServer struct {
	base string
}

// query evaluates expr now through /api/v1/query and returns the values
// of its samples (a vector's, or a scalar's one).
func (p promServer) query(expr string) ([]float64, error) {
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(expr), &r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.Status, r.Error)
	}
	var pairs [][2]any
	switch r.Data.ResultType {
	case "vector":
		var v []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return nil, err
		}
		for _, s := range v {
			pairs = append(pairs, s.Value)
		}
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(r.Data.Result, &s); err != nil {
			return nil, err
		}
		pairs = append(pairs, s)
	default:
		return nil, fmt.Errorf("result type %s", r.Data.ResultType)
	}
	var out []float64
	for _, pv := range pairs {
		s, _ := pv[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("sample %v: %w", pv, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func (p promServer) get(path string, v any) error {
	resp, err := http.Get(p.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// startPrometheus runs Prometheus on a loopback port with a temporary
// configuration that scrapes target every second and loads rulesFile.
func startPrometheus(t *testing.T, bin, target string) promServer {
	t.Helper()
	dir := t.TempDir()
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: tiercache
    static_configs:
      - targets: [%q]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	p := promServer{base: "http://" + addr}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case err := <-done:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("prometheus exited (%v):\n%s", err, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus not ready after 60 s")
		}
	}
}

// TestDashboardThroughPrometheus: a real Prometheus scrapes a built
// sidecar under a load of every command family (watchWorker) every
// second; then every query of every panel of deploy/grafana/tiercache.json,
// with Grafana's variables substituted, returns at least one finite
// sample through /api/v1/query, but for remotePanels while the sidecar
// has no remote tier (then they must parse); the instance variable's
// query finds the sidecar; Prometheus evaluates every alerting rule of
// deploy/prometheus/tiercache-rules.yml without error; and every metric
// the rules and panels name is one the sidecar exports (but the remote
// tier's while it has none).
func TestDashboardThroughPrometheus(t *testing.T) {
	bin := requireWatchTool(t, "prometheus")
	_, panels := loadDashboard(t)
	ws := startWatchSidecar(t)
	load := startWatchLoad(ws.sock)
	t.Cleanup(func() { load.stop() })
	prom := startPrometheus(t, bin, ws.metricsAddr)

	// Wait for 12 s of scrapes under load: more than the 10 s rate interval.
	var first time.Time
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if v, err := prom.query(`up{job="tiercache"} == 1`); err == nil && len(v) == 1 && first.IsZero() {
			first = time.Now()
		}
		if !first.IsZero() && time.Since(first) > 12*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus scraped no tiercache target within 90 s (first scrape %v)", first)
		}
	}

	info := infoSnapshot(t, ws.rc)
	remote := info["remote_backend"] != ""

	var iv struct {
		Data []string `json:"data"`
	}
	if err := prom.get("/api/v1/label/instance/values?match[]=tiercache_keys", &iv); err != nil || !slices.Contains(iv.Data, ws.metricsAddr) {
		t.Errorf("label_values(tiercache_keys, instance) = %v (%v), want %s among them", iv.Data, err, ws.metricsAddr)
	}

	checked := 0
	for _, p := range panels {
		needsRemote := slices.Contains(remotePanels, p.Title)
		for _, q := range p.Targets {
			expr := grafanaVars(q.Expr, ws.metricsAddr)
			v, err := prom.query(expr)
			switch {
			case err != nil:
				t.Errorf("panel %q query %s: %v\n%s", p.Title, q.RefID, err, expr)
			case needsRemote && !remote:
				t.Logf("panel %q query %s: parsed; not checked for data: it needs a remote tier and the sidecar has none", p.Title, q.RefID)
			case !slices.ContainsFunc(v, func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }):
				t.Errorf("panel %q query %s returned no finite sample (%v):\n%s", p.Title, q.RefID, v, expr)
			default:
				checked++
				t.Logf("panel %q query %s: %.4g", p.Title, q.RefID, v[:min(len(v), 9)])
			}
		}
	}
	t.Logf("%d panels, %d queries returned data (remote tier configured: %v)", len(panels), checked, remote)

	// The alerting rules: evaluated by this Prometheus (every second)
	// without error, on metrics the sidecar has.
	var rules struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Query     string `json:"query"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := prom.get("/api/v1/rules", &rules); err != nil {
		t.Fatal(err)
	}
	exprs := map[string]string{}
	for _, g := range rules.Data.Groups {
		for _, r := range g.Rules {
			exprs["rule "+r.Name] = r.Query
			if r.Health != "ok" || r.LastError != "" {
				t.Errorf("rule %s: health %q, %s", r.Name, r.Health, r.LastError)
			}
		}
	}
	if len(exprs) == 0 {
		t.Errorf("prometheus loaded no rule from %s", rulesFile)
	}
	for _, p := range panels {
		for _, q := range p.Targets {
			exprs["panel "+p.Title+" "+q.RefID] = q.Expr
		}
	}
	var names struct {
		Data []string `json:"data"`
	}
	if err := prom.get("/api/v1/label/__name__/values", &names); err != nil {
		t.Fatal(err)
	}
	metricName := regexp.MustCompile(`\b(?:tiercache|process|go)_[a-z0-9_]+`)
	for where, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			if !remote && strings.HasPrefix(n, "tiercache_remote_") {
				continue
			}
			if !slices.Contains(names.Data, n) {
				t.Errorf("%s names %s, which the sidecar does not export", where, n)
			}
		}
	}
	ops, err := load.stop()
	if err != nil {
		t.Errorf("load: %v", err)
	}
	t.Logf("load: %d commands", ops)
}
