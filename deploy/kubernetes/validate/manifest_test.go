package validate

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

const (
	manifest = "../tiercache.yaml"
	seccomp  = "../../seccomp/tiercache.json"
	// binary and uid are the image's entrypoint and USER (Dockerfile).
	binary = "/usr/local/bin/tiercache"
	uid    = 65532
)

// objects are the manifest's documents, decoded strictly.
type objects struct {
	cm     *corev1.ConfigMap
	deploy *appsv1.Deployment
}

func load(t *testing.T) objects {
	t.Helper()
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var o objects
	for i, doc := range bytes.Split(b, []byte("\n---\n")) {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var dst any
		switch meta.Kind {
		case "ConfigMap":
			o.cm = &corev1.ConfigMap{}
			dst = o.cm
		case "Deployment":
			o.deploy = &appsv1.Deployment{}
			dst = o.deploy
		default:
			t.Fatalf("document %d: unexpected kind %q", i, meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, dst); err != nil {
			t.Fatalf("document %d (%s): %v", i, meta.Kind, err)
		}
	}
	if o.cm == nil || o.deploy == nil {
		t.Fatal("the manifest lacks the ConfigMap or the Deployment")
	}
	return o
}

// sidecar returns the tiercache init container and the app container.
func (o objects) sidecar(t *testing.T) (*corev1.Container, *corev1.Container) {
	t.Helper()
	spec := &o.deploy.Spec.Template.Spec
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Name != "tiercache" {
		t.Fatalf("init containers %v, want tiercache alone", spec.InitContainers)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want the app alone", len(spec.Containers))
	}
	return &spec.InitContainers[0], &spec.Containers[0]
}

// config is the ConfigMap's tiercache configuration.
type config struct {
	Server struct {
		Socket     string `json:"socket"`
		SocketMode string `json:"socket_mode"`
	} `json:"server"`
	Hot struct {
		Bytes string `json:"bytes"`
	} `json:"hot"`
	Warm struct {
		Bytes string `json:"bytes"`
	} `json:"warm"`
	Cold struct {
		Backend  string `json:"backend"`
		DataDir  string `json:"data_dir"`
		Capacity string `json:"capacity"`
	} `json:"cold"`
}

func (o objects) config(t *testing.T) config {
	t.Helper()
	var c config
	if err := yaml.Unmarshal([]byte(o.cm.Data["tiercache.yaml"]), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// bytesOf parses tiercache's sizes ("256MiB", "1GiB"): Kubernetes
// quantities spell them without the B.
func bytesOf(t *testing.T, s string) int64 {
	t.Helper()
	q, err := resource.ParseQuantity(strings.TrimSuffix(s, "B"))
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return q.Value()
}

// TestManifestsDecodeStrictly (K1).
func TestManifestsDecodeStrictly(t *testing.T) {
	o := load(t)
	if o.cm.Name != o.deploy.Spec.Template.Spec.Volumes[2].ConfigMap.Name {
		t.Errorf("the config volume names %q, the ConfigMap is %q", o.deploy.Spec.Template.Spec.Volumes[2].ConfigMap.Name, o.cm.Name)
	}
}

// TestSidecarContainer (K2).
func TestSidecarContainer(t *testing.T) {
	o := load(t)
	tc, _ := o.sidecar(t)
	if tc.RestartPolicy == nil || *tc.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("tiercache restartPolicy %v, want Always (a native sidecar)", tc.RestartPolicy)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		want  string
	}{{"startup", tc.StartupProbe, "ready"}, {"readiness", tc.ReadinessProbe, "ready"}, {"liveness", tc.LivenessProbe, "live"}} {
		if p.probe == nil || p.probe.Exec == nil {
			t.Errorf("%s probe: %v, want an exec probe", p.name, p.probe)
			continue
		}
		if got := strings.Join(p.probe.Exec.Command, " "); got != binary+" probe "+p.want {
			t.Errorf("%s probe runs %q, want %s probe %s", p.name, got, binary, p.want)
		}
	}
	if s := tc.StartupProbe; s != nil && int64(s.PeriodSeconds)*int64(s.FailureThreshold) < 300 {
		t.Errorf("startup probe gives a load %d s, want at least 300 (a cold store opened by scan)", s.PeriodSeconds*s.FailureThreshold)
	}
	var cfgEnv bool
	for _, e := range tc.Env {
		cfgEnv = cfgEnv || (e.Name == "TIERCACHE_CONFIG" && e.Value == "/etc/tiercache/tiercache.yaml")
	}
	if !cfgEnv {
		t.Error("TIERCACHE_CONFIG does not point serve and the probes at the ConfigMap's file")
	}
}

// mountPath is where c mounts volume name ("" if it does not).
func mountPath(c *corev1.Container, name string) string {
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			return m.MountPath
		}
	}
	return ""
}

// TestVolumes (K3).
func TestVolumes(t *testing.T) {
	o := load(t)
	cfg := o.config(t)
	tc, app := o.sidecar(t)
	vols := map[string]corev1.Volume{}
	for _, v := range o.deploy.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	sockDir := cfg.Server.Socket[:strings.LastIndex(cfg.Server.Socket, "/")]
	if v := vols["tiercache-socket"]; v.EmptyDir == nil {
		t.Error("the socket's volume is not an emptyDir")
	}
	for _, c := range []*corev1.Container{tc, app} {
		if got := mountPath(c, "tiercache-socket"); got != sockDir {
			t.Errorf("%s mounts the socket volume at %q, the socket is in %s", c.Name, got, sockDir)
		}
	}
	for _, e := range app.Env {
		if e.Name == "REDIS_URL" && e.Value != "unix://"+cfg.Server.Socket {
			t.Errorf("the app's REDIS_URL %q is not the socket %s", e.Value, cfg.Server.Socket)
		}
	}
	if got := mountPath(tc, "tiercache-data"); got != cfg.Cold.DataDir {
		t.Errorf("data volume at %q, cold.data_dir is %s", got, cfg.Cold.DataDir)
	}
	data := vols["tiercache-data"]
	capacity := bytesOf(t, cfg.Cold.Capacity)
	if data.EmptyDir == nil || data.EmptyDir.SizeLimit == nil || data.EmptyDir.SizeLimit.Value() < capacity {
		t.Errorf("data volume %+v: want an emptyDir with room for cold.capacity %d", data.VolumeSource, capacity)
	}
	if got := mountPath(tc, "tiercache-config"); got != "/etc/tiercache" {
		t.Errorf("config volume at %q", got)
	}
}

// TestSecurityContext (K4).
func TestSecurityContext(t *testing.T) {
	o := load(t)
	cfg := o.config(t)
	pod := o.deploy.Spec.Template.Spec.SecurityContext
	tc, app := o.sidecar(t)
	sc := tc.SecurityContext
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || pod.FSGroup == nil {
		t.Fatalf("pod securityContext %+v: want runAsNonRoot and an fsGroup", pod)
	}
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != uid {
		t.Fatalf("tiercache runs as %v, the image's user is %d", sc, uid)
	}
	if cfg.Server.SocketMode != "0660" || app.SecurityContext == nil || app.SecurityContext.RunAsUser == nil ||
		*app.SecurityContext.RunAsUser == uid {
		t.Errorf("socket mode %s with the app as another user: want 0660 and the app reaching it through fsGroup %d",
			cfg.Server.SocketMode, *pod.FSGroup)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("tiercache may escalate privileges or write its root filesystem")
	}
	if c := sc.Capabilities; c == nil || fmt.Sprint(c.Drop) != "[ALL]" || fmt.Sprint(c.Add) != "[SYS_NICE]" {
		t.Errorf("capabilities %+v, want drop ALL, add SYS_NICE", sc.Capabilities)
	}
	sp := sc.SeccompProfile
	if sp == nil || sp.Type != corev1.SeccompProfileTypeLocalhost || sp.LocalhostProfile == nil ||
		!strings.HasSuffix(*sp.LocalhostProfile, "/tiercache.json") {
		t.Fatalf("seccomp profile %+v, want Localhost .../tiercache.json", sp)
	}
	prof, err := os.ReadFile(seccomp)
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []string{`"io_uring_setup"`, `"io_uring_enter"`, `"io_uring_register"`, `"mbind"`, `"move_pages"`} {
		if !bytes.Contains(prof, []byte(call)) {
			t.Errorf("%s does not name %s", seccomp, call)
		}
	}
}

// TestMemoryCoversBudget (K5): the memory limit covers the bound
// deploy/kubernetes/README.md derives from the ConfigMap: 1.10 × the DRAM
// tiers, a directory entry (200 B, tier.DirEntryBytes) for up to twice the
// keys DRAM holds (tier T37) at values of 1.5 KiB, the cold index (at
// most 12 B a record, logstore E35) for cold.capacity of such values,
// the cold store's registered buffers (14 MiB) and 32 MiB.
func TestMemoryCoversBudget(t *testing.T) {
	o := load(t)
	cfg := o.config(t)
	tc, _ := o.sidecar(t)
	dram := bytesOf(t, cfg.Hot.Bytes) + bytesOf(t, cfg.Warm.Bytes)
	capacity := bytesOf(t, cfg.Cold.Capacity)
	const value, entry, index = 1536, 200, 12.0
	need := int64(1.10*float64(dram)) + 2*(dram/value)*entry + int64(index*float64(capacity/value)) + 14<<20 + 32<<20
	req, lim := tc.Resources.Requests.Memory(), tc.Resources.Limits.Memory()
	if lim.Value() < need || req.Cmp(*lim) != 0 {
		t.Errorf("memory request %v, limit %v: want both at least %d MiB (%d MiB of DRAM tiers, %d MiB of cold)",
			req, lim, need>>20, dram>>20, capacity>>20)
	}
	t.Logf("limit %v covers %d MiB", lim, need>>20)
}
