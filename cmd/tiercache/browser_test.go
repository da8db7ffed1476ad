package main

import (
	"bytes"
	"context"
	"html"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statusScreenshotEnv names a file the browser test also writes its
// screenshot of the page under load to (docs/img/status.png is one).
const statusScreenshotEnv = "TIERCACHE_STATUS_SCREENSHOT"

// chromium runs headless Chromium with a fresh profile and the flags
// that work on a machine with no network but loopback, then args; it
// returns what Chromium printed on stdout.
func chromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// shownValue is one number or text the page shows: its INFO field, its
// unit, INFO's value and the text a reader sees.
type shownValue struct{ field, unit, value, text string }

var (
	shownRe     = regexp.MustCompile(`<span class="v(?: bad)?" data-field="([^"]*)" data-unit="([^"]*)" data-value="([^"]*)" title="[^"]*">([^<]*)</span>`)
	refreshesRe = regexp.MustCompile(`<body data-refreshes="(\d+)"`)
	errorRe     = regexp.MustCompile(`<div id="error"[^>]*>([^<]*)</div>`)
)

// pageValues reads the values a dumped status page shows, and how many
// times it had read status.json.
func pageValues(t *testing.T, dom []byte) ([]shownValue, int) {
	t.Helper()
	var out []shownValue
	_, main, _ := bytes.Cut(dom, []byte(`<main id="main">`))
	main, _, _ = bytes.Cut(main, []byte("</main>"))
	for _, m := range shownRe.FindAllSubmatch(main, -1) {
		out = append(out, shownValue{html.UnescapeString(string(m[1])), string(m[2]), html.UnescapeString(string(m[3])), html.UnescapeString(string(m[4]))})
	}
	m := refreshesRe.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the dumped page has no body data-refreshes:\n%.2000s", dom)
	}
	if e := errorRe.FindSubmatch(dom); e == nil || len(bytes.TrimSpace(e[1])) > 0 {
		t.Errorf("the page shows an error: %q", e)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return out, n
}

// groupThousands writes n as en-US does: 1,234,567.
func groupThousands(n int64) string {
	s := strconv.FormatInt(max(n, -n), 10)
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// textShows reports whether text is how the page shows value in unit
// (statuspage.html's fmt): a count grouped by thousands, a size in B,
// KiB, MiB... to a tenth, a ratio to four decimals; -1 is "unbound" for
// a NUMA node or placement and "unknown" for a size or an item count.
func textShows(field, unit, value, text string) bool {
	if unit == "text" {
		return text == value || value == "" && text == "—"
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return false
	}
	if v < 0 {
		if strings.HasSuffix(field, "numa_node") || strings.HasSuffix(field, "placement") {
			return text == "unbound"
		}
		if unit == "bytes" || strings.HasSuffix(field, "_items") {
			return text == "unknown"
		}
	}
	switch unit {
	case "ms":
		return text == groupThousands(int64(v))+" ms"
	case "ratio":
		return text == strconv.FormatFloat(v, 'f', 4, 64)
	case "bytes":
		if math.Abs(v) < 1024 {
			return text == strconv.FormatFloat(v, 'f', -1, 64)+" B"
		}
		num, u, ok := strings.Cut(text, " ")
		f, err := strconv.ParseFloat(num, 64)
		mult := map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}[u]
		return ok && err == nil && mult > 0 && f >= 1 && f < 1024 && math.Abs(f*mult-v) <= 0.05*mult+1
	}
	return text == groupThousands(int64(math.Round(v))) // the page rounds a count (instantaneous_input_kbps 339.93: "340")
}

// loadStatusPage dumps the status page's DOM after Chromium ran it for
// 5 s of virtual time (its reads of status.json at 0, 2 and 4 s), between
// two INFOs, and checks what it shows against them (exact: every gauge
// too, for a quiet sidecar).
func loadStatusPage(t *testing.T, bin string, ws *watchSidecar, exact bool) {
	t.Helper()
	before := infoSnapshot(t, ws.rc)
	dom := chromium(t, bin, "--virtual-time-budget=5000", "--dump-dom", "http://"+ws.metricsAddr+"/")
	after := infoSnapshot(t, ws.rc)
	values, refreshes := pageValues(t, dom)
	if refreshes < 2 {
		t.Errorf("the page read status.json %d times in 5 s, want at least 2 (it refreshes every 2 s)", refreshes)
	}
	shown := map[string]string{}
	for _, v := range values {
		if prev, ok := shown[v.field]; ok && prev != v.value {
			t.Errorf("%s shown twice, as %s and %s", v.field, prev, v.value)
		}
		shown[v.field] = v.value
		if !textShows(v.field, v.unit, v.value, v.text) {
			t.Errorf("%s = %s (%s) shown as %q", v.field, v.value, v.unit, v.text)
		}
	}
	t.Logf("the page read status.json %d times and shows %d values", refreshes, len(values))
	checkShownAgainstInfo(t, shown, before, after, exact)
}

// TestStatusPageInChromium (C18): headless Chromium loads the status page
// from a built sidecar under a load of every command family
// (watchWorker) and runs it until it has read status.json at least
// twice; every value it shows is formatted from INFO's value for the same
// field, taken just before and just after: a counter between the two, a
// gauge the configuration fixes equal; then, the load stopped and the
// sidecar quiet, every value equal to INFO's. A screenshot of the page
// under load is a PNG (kept at $TIERCACHE_STATUS_SCREENSHOT when set).
func TestStatusPageInChromium(t *testing.T) {
	bin := requireWatchTool(t, "chromium")
	ws := startWatchSidecar(t)
	load := startWatchLoad(ws.sock)
	t.Cleanup(func() { load.stop() })
	time.Sleep(3 * time.Second) // let the load fill DRAM and reach cold

	t.Run("under load", func(t *testing.T) { loadStatusPage(t, bin, ws, false) })

	png := filepath.Join(t.TempDir(), "status.png")
	chromium(t, bin, "--virtual-time-budget=3000", "--hide-scrollbars", "--window-size=1400,1350", "--screenshot="+png,
		"http://"+ws.metricsAddr+"/")
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 10000 {
		t.Errorf("screenshot: %d bytes, %v: want a PNG", len(b), err)
	}
	if p := os.Getenv(statusScreenshotEnv); p != "" {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Error(err)
		}
	}

	ops, err := load.stop()
	if err != nil {
		t.Errorf("load: %v", err)
	}
	t.Logf("load: %d commands", ops)
	waitQuiet(t, ws)
	t.Run("quiet", func(t *testing.T) { loadStatusPage(t, bin, ws, true) })
}

// waitQuiet waits until the sidecar's INFO tiers, tenants and clients
// sections stop changing (the flusher drained, the cold store's I/O
// done, the load's connections closed).
func waitQuiet(t *testing.T, ws *watchSidecar) {
	t.Helper()
	ctx := context.Background()
	prev := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		cur, err := ws.rc.Info(ctx, "tiers", "tenants", "clients").Result()
		if err != nil {
			t.Fatal(err)
		}
		if cur == prev {
			return
		}
		prev = cur
		if time.Now().After(deadline) {
			t.Fatalf("INFO tiers still changing after 30 s without load:\n%s", cur)
		}
	}
}
