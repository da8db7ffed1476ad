package kvtcp

import (
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/nvmekv"
	"github.com/tiercache/tiercache/nvmekv/dhchap"
)

// TestAuthThroughKernel (V31): `tiercache kvtarget -hosts` with a host
// whose secret nvme-cli's gen-dhchap-key made and a controller secret:
// the guest kernel's nvme-tcp host connects with dhchap_secret and
// dhchap_ctrl_secret (DH-HMAC-CHAP on every queue, both ways) and
// stores through the namespace; a wrong secret, no secret, a wrong
// controller secret and a host NQN not listed are each refused by the
// kernel's connect, and the target counts them (its last log line).
func TestAuthThroughKernel(t *testing.T) {
	requireGuest(t)
	// nvme-cli draws its key with getrandom(GRND_NONBLOCK), which fails
	// this early in a guest without an entropy source: give it the key.
	raw, _ := dhchap.GenerateSecret(0, nil)
	code, out := nvmeCLI(t, "gen-dhchap-key", "--secret="+hex.EncodeToString(raw.Key), "--hmac=1", "--nqn="+hostA)
	key := strings.TrimSpace(out)
	if code != 0 {
		t.Fatalf("nvme gen-dhchap-key: exit %d: %s", code, out)
	}
	if _, err := dhchap.ParseSecret(key); err != nil {
		t.Fatalf("nvme-cli's secret %q: %v", key, err)
	}
	ctrlKey, _ := dhchap.GenerateSecret(dhchap.SHA512, nil)
	wrong, _ := dhchap.GenerateSecret(dhchap.SHA256, nil)
	hosts := t.TempDir() + "/hosts"
	if err := os.WriteFile(hosts, []byte(hostA+" "+key+" "+ctrlKey.String()+"\n"+hostB+" "+wrong.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tg := StartTarget(t, "-store", "/tmp/kv-auth.img", "-capacity", "32MiB", "-hosts", hosts)
	d, err := tg.Connect(hostOpts(hostA)+",dhchap_secret="+key+",dhchap_ctrl_secret="+ctrlKey.String(), true)
	if err != nil {
		t.Fatalf("connect with the right secrets: %v\nkernel: %s\ntarget: %s", err, KernelLog("nvme"), tg.Output())
	}
	p, err := nvmekv.OpenPassthrough(d.NG, nvmekv.PassthroughOptions{RingEntries: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Store(t.Context(), []byte("authenticated"), []byte("yes"), 0); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if log := KernelLog(d.Ctrl); !strings.Contains(log, "authenticated") {
		t.Fatalf("the kernel did not log the authentication: %s", log)
	}
	d.Disconnect()
	for _, tc := range []struct{ name, opts string }{
		{"a wrong secret", hostOpts(hostA) + ",dhchap_secret=" + wrong.String()},
		{"no secret", hostOpts(hostA)},
		{"a wrong controller secret", hostOpts(hostA) + ",dhchap_secret=" + key + ",dhchap_ctrl_secret=" + wrong.String()},
		{"a host not listed", hostOpts("nqn.2014-08.org.nvmexpress:uuid:guest-host-c") + ",dhchap_secret=" + key},
	} {
		if d, err := tg.Connect(tc.opts, false); err == nil {
			t.Fatalf("%s: the kernel connected %s", tc.name, d.Ctrl)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	tg.Stop()
	counts := map[string]int{}
	for _, k := range []string{"auth_ok", "auth_failed", "auth_missing", "hosts_refused"} {
		m := regexp.MustCompile(`"` + k + `":(\d+)`).FindStringSubmatch(tg.Output())
		if m == nil {
			t.Fatalf("the target's last line has no %s:\n%s", k, tg.Output())
		}
		counts[k], _ = strconv.Atoi(m[1])
	}
	// The right connect authenticated the admin queue and each I/O queue
	// (one per guest CPU); the wrong secret and the wrong controller
	// secret failed; the host without a secret closed its admin queue
	// unauthenticated; the unlisted host was refused at Connect.
	if counts["auth_ok"] < 2 || counts["auth_failed"] < 2 || counts["auth_missing"] < 1 || counts["hosts_refused"] < 1 {
		t.Fatalf("target counts %v\n%s", counts, tg.Output())
	}
	t.Logf("target counts %v", counts)
}
