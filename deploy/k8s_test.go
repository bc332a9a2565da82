package deploy

import (
	"fmt"
	"net"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/config"
)

// readyTimeout is how long the gateway's /readyz waits for the database
// (readyTimeout in internal/app/metrics.go); the probe must wait longer.
const readyTimeout = 2 * time.Second

// manifests are the objects of k8s/, one of each kind.
type manifests struct {
	all        []object
	namespace  namespace
	secret     secret
	config     configMap
	deployment deployment
	service    service
	hpa        hpa
	pdb        pdb
}

// loadManifests decodes every object in k8s/ strictly into its kind's type
// and checks what every object needs.
func loadManifests(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("k8s", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in k8s/ (%v)", err)
	}
	var m manifests
	seen := map[string]string{}
	for _, f := range files {
		for i, doc := range documents(t, f) {
			where := fmt.Sprintf("%s (document %d)", f, i+1)
			var o object
			if err := doc.Decode(&o); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: apiVersion %q, kind %q, metadata.name %q: each is required", where, o.APIVersion, o.Kind, o.Metadata.Name)
			}
			id := o.Kind + "/" + o.Metadata.Name
			if prev, ok := seen[id]; ok {
				t.Errorf("%s: %s is also defined in %s", where, id, prev)
			}
			seen[id] = where
			m.all = append(m.all, o)
			target, apiVersion := m.slot(o.Kind)
			if target == nil {
				t.Errorf("%s: kind %s is not one the tests know; add it to k8stypes_test.go", where, o.Kind)
				continue
			}
			if o.APIVersion != apiVersion {
				t.Errorf("%s: %s has apiVersion %q, want %q", where, o.Kind, o.APIVersion, apiVersion)
			}
			if err := decodeStrict(doc, target); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
	for _, kind := range []string{"Namespace", "Secret", "ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"} {
		if !slices.ContainsFunc(m.all, func(o object) bool { return o.Kind == kind }) {
			t.Errorf("k8s/ has no %s", kind)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return m
}

// slot is where an object of kind is decoded to, and the apiVersion it has.
func (m *manifests) slot(kind string) (any, string) {
	switch kind {
	case "Namespace":
		return &m.namespace, "v1"
	case "Secret":
		return &m.secret, "v1"
	case "ConfigMap":
		return &m.config, "v1"
	case "Deployment":
		return &m.deployment, "apps/v1"
	case "Service":
		return &m.service, "v1"
	case "HorizontalPodAutoscaler":
		return &m.hpa, "autoscaling/v2"
	case "PodDisruptionBudget":
		return &m.pdb, "policy/v1"
	}
	return nil, ""
}

// TestK8sObjectsAreInTheNamespace: every object but the Namespace itself
// names it, so `kubectl apply -f deploy/k8s/` puts nothing elsewhere.
func TestK8sObjectsAreInTheNamespace(t *testing.T) {
	m := loadManifests(t)
	for _, o := range m.all {
		want := m.namespace.Metadata.Name
		if o.Kind == "Namespace" {
			want = ""
		}
		if o.Metadata.Namespace != want {
			t.Errorf("%s/%s: namespace %q, want %q", o.Kind, o.Metadata.Name, o.Metadata.Namespace, want)
		}
	}
}

// gatewayContainer is the Deployment's one container.
func gatewayContainer(t *testing.T, d deployment) container {
	t.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(cs))
	}
	return cs[0]
}

// httpPort is the container's port named http.
func httpPort(t *testing.T, c container) int {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == "http" {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named http", c.Name)
	return 0
}

// pointsAt reports whether a probe's or a Service's port means the
// container port http (by name or number).
func pointsAt(p intOrString, port int) bool {
	return (p.IsText && p.Str == "http") || (!p.IsText && p.Int == port)
}

// TestK8sDeploymentProbes: the probes ask the gateway's own endpoints on its
// http port (readiness /readyz, which checks the database; liveness and
// startup /healthz, which only says the process runs) and wait longer than
// /readyz waits for the database.
func TestK8sDeploymentProbes(t *testing.T) {
	m := loadManifests(t)
	c := gatewayContainer(t, m.deployment)
	port := httpPort(t, c)
	for _, tc := range []struct {
		name string
		p    *probe
		path string
	}{
		{"readinessProbe", c.ReadinessProbe, "/readyz"},
		{"livenessProbe", c.LivenessProbe, "/healthz"},
		{"startupProbe", c.StartupProbe, "/healthz"},
	} {
		switch {
		case tc.p == nil || tc.p.HTTPGet == nil:
			t.Errorf("%s: want an httpGet probe of %s", tc.name, tc.path)
		case tc.p.HTTPGet.Path != tc.path:
			t.Errorf("%s: path %q, want %q", tc.name, tc.p.HTTPGet.Path, tc.path)
		case !pointsAt(tc.p.HTTPGet.Port, port):
			t.Errorf("%s: port %s, want http (%d)", tc.name, tc.p.HTTPGet.Port, port)
		}
	}
	if r := c.ReadinessProbe; r != nil && time.Duration(r.TimeoutSeconds)*time.Second <= readyTimeout {
		t.Errorf("readinessProbe.timeoutSeconds %d: /readyz waits up to %s for the database, so the probe must wait longer", r.TimeoutSeconds, readyTimeout)
	}
	if s := c.StartupProbe; s != nil && s.PeriodSeconds*s.FailureThreshold < 60 {
		t.Errorf("startupProbe allows %ds: migrations and a journal replay need minutes, not seconds", s.PeriodSeconds*s.FailureThreshold)
	}
}

// TestK8sSelectorsMatchThePods: the Deployment, Service and
// PodDisruptionBudget select the Deployment's pods, the Service forwards to
// their http port, and the HPA scales that Deployment within bounds that
// keep the PDB satisfiable.
func TestK8sSelectorsMatchThePods(t *testing.T) {
	m := loadManifests(t)
	d := m.deployment
	labels := d.Spec.Template.Metadata.Labels
	port := httpPort(t, gatewayContainer(t, d))
	if !subset(d.Spec.Selector.MatchLabels, labels) {
		t.Errorf("Deployment selector %v does not match its pod labels %v", d.Spec.Selector.MatchLabels, labels)
	}
	if !subset(m.service.Spec.Selector, labels) {
		t.Errorf("Service selector %v does not match the pod labels %v", m.service.Spec.Selector, labels)
	}
	if len(m.service.Spec.Ports) == 0 {
		t.Error("the Service has no port")
	}
	for _, p := range m.service.Spec.Ports {
		if !pointsAt(p.TargetPort, port) {
			t.Errorf("Service port %s: targetPort %s, want http (%d)", p.Name, p.TargetPort, port)
		}
	}
	if !subset(m.pdb.Spec.Selector.MatchLabels, labels) {
		t.Errorf("PodDisruptionBudget selector %v does not match the pod labels %v", m.pdb.Spec.Selector.MatchLabels, labels)
	}

	ref := m.hpa.Spec.ScaleTargetRef
	if ref.APIVersion != d.APIVersion || ref.Kind != d.Kind || ref.Name != d.Metadata.Name {
		t.Errorf("HPA scales %s %s/%s, want %s %s/%s", ref.APIVersion, ref.Kind, ref.Name, d.APIVersion, d.Kind, d.Metadata.Name)
	}
	h := m.hpa.Spec
	if h.MinReplicas < 2 || h.MinReplicas > h.MaxReplicas || d.Spec.Replicas < h.MinReplicas || d.Spec.Replicas > h.MaxReplicas {
		t.Errorf("replicas %d, HPA %d..%d: want 2 <= min <= replicas <= max", d.Spec.Replicas, h.MinReplicas, h.MaxReplicas)
	}
	if len(h.Metrics) != 1 || h.Metrics[0].Resource.Name != "cpu" || h.Metrics[0].Resource.Target.AverageUtilization <= 0 {
		t.Errorf("HPA metrics %+v: want one CPU utilization target", h.Metrics)
	}
	if _, ok := gatewayContainer(t, d).Resources.Requests["cpu"]; !ok {
		t.Error("the container requests no CPU: the HPA's utilization is a share of the request")
	}
	// A drain must be able to evict a pod with the fewest replicas running.
	switch p := m.pdb.Spec; {
	case (p.MinAvailable == nil) == (p.MaxUnavailable == nil):
		t.Error("the PodDisruptionBudget needs exactly one of minAvailable and maxUnavailable")
	case p.MaxUnavailable != nil && (p.MaxUnavailable.IsText || p.MaxUnavailable.Int < 1):
		t.Errorf("PDB maxUnavailable %s: want a count of at least 1", p.MaxUnavailable)
	case p.MinAvailable != nil && (p.MinAvailable.IsText || p.MinAvailable.Int >= h.MinReplicas):
		t.Errorf("PDB minAvailable %s: want a count below the HPA's minReplicas %d", p.MinAvailable, h.MinReplicas)
	}
}

// TestK8sConfigMapConfig loads the ConfigMap's modelgate.yaml with the
// project's config loader, its ${VAR}s resolved from the Secret the pods
// read, and checks the Deployment against it: the file is mounted where
// --config says, the port and the journal folder agree, each pod's journal
// is its own, and the pod is given time to drain.
func TestK8sConfigMapConfig(t *testing.T) {
	m := loadManifests(t)
	d := m.deployment
	c := gatewayContainer(t, d)
	pod := d.Spec.Template.Spec

	// The environment: the Secret the container reads whole.
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.SecretRef.Name != m.secret.Metadata.Name {
			t.Errorf("envFrom names Secret %q; the manifests define %q", from.SecretRef.Name, m.secret.Metadata.Name)
			continue
		}
		for k, v := range m.secret.StringData {
			env[k] = v
		}
	}
	if len(env) == 0 {
		t.Fatal("the container reads no Secret: the database URL and keys have nowhere to come from")
	}
	for k, v := range m.secret.StringData {
		if !isPlaceholder(v) {
			t.Errorf("Secret key %s: %q is not marked CHANGE-ME; the file holds placeholders only", k, v)
		}
	}

	// The file: --config names a ConfigMap key mounted from a volume.
	i := slices.Index(c.Args, "--config")
	if i < 0 || i+1 >= len(c.Args) || c.Args[0] != "serve" {
		t.Fatalf("args %q: want serve --config FILE", c.Args)
	}
	file := c.Args[i+1]
	for _, e := range c.Env {
		if e.Name == "MODELGATE_CONFIG" && e.Value != file {
			t.Errorf("MODELGATE_CONFIG %s (what the CLI in the pod reads), but serve reads %s", e.Value, file)
		}
	}
	mounts := map[string]string{} // mount path → volume name
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = vm.Name
	}
	volumes := map[string]volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	for _, name := range mounts {
		if _, ok := volumes[name]; !ok {
			t.Errorf("a volume mount names volume %q, which the pod does not have", name)
		}
	}
	cmVol := volumes[mounts[path.Dir(file)]]
	if cmVol.ConfigMap == nil || cmVol.ConfigMap.Name != m.config.Metadata.Name {
		t.Fatalf("--config %s: its folder is not mounted from ConfigMap %s", file, m.config.Metadata.Name)
	}
	text, ok := m.config.Data[path.Base(file)]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s (the file --config names)", m.config.Metadata.Name, path.Base(file))
	}
	cfg := loadGatewayText(t, path.Base(file), text, env)
	for name := range env {
		if !strings.Contains(text, "${"+name+"}") {
			t.Errorf("Secret key %s is used nowhere in the config", name)
		}
	}

	// The listener is the container's http port, on every interface.
	host, portText, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := strconv.Atoi(portText); p != httpPort(t, c) || (host != "0.0.0.0" && host != "") {
		t.Errorf("listen %s: want 0.0.0.0:%d (the container port http)", cfg.Listen, httpPort(t, c))
	}
	// Behind a Service, links cannot be made from the listen address.
	if cfg.PublicURL == "" {
		t.Error("public_url is unset: image and video links would name the pod's listen address")
	}
	checkJournal(t, cfg, mounts, volumes)
	checkDrain(t, cfg, pod.TerminationGracePeriodSeconds, c.Lifecycle.PreStop.Sleep.Seconds)
	checkMemory(t, cfg, c.Resources.Limits["memory"])
	// With local image folders, an image made on one pod could not be
	// fetched through another.
	if cfg.Images.S3 == nil {
		t.Error("images.s3 is unset: with several pods, images and videos need a store they all share")
	} else if cfg.Images.SigningKey == "" {
		t.Error("images.signing_key is unset: every pod must sign image links with the same key")
	}
}

// checkJournal: usage.journal_dir is a mount of a per-pod emptyDir volume.
func checkJournal(t *testing.T, cfg *config.Config, mounts map[string]string, volumes map[string]volume) {
	t.Helper()
	dir := cfg.Usage.JournalDir
	name, ok := mounts[dir]
	switch {
	case dir == "":
		t.Error("usage.journal_dir is unset: each pod needs its journal on a volume of its own")
	case !ok:
		t.Errorf("usage.journal_dir %s is not a volume mount of the container", dir)
	case volumes[name].EmptyDir == nil:
		t.Errorf("usage.journal_dir %s is mounted from volume %s, which is not a per-pod emptyDir", dir, name)
	}
}

// checkDrain: the pod gets its preStop pause, the gateway's drain and a
// margin for writing the queued usage records before Kubernetes kills it.
func checkDrain(t *testing.T, cfg *config.Config, graceSeconds, preStopSeconds int) {
	t.Helper()
	grace := time.Duration(graceSeconds) * time.Second
	need := time.Duration(preStopSeconds)*time.Second + time.Duration(cfg.ShutdownTimeout) + 5*time.Second
	if grace < need {
		t.Errorf("terminationGracePeriodSeconds %d: preStop %ds + shutdown_timeout %s + 5s to write the queued records need %s",
			graceSeconds, preStopSeconds, cfg.ShutdownTimeout, need)
	}
}

// checkMemory: the container's memory limit is above the Go runtime's soft
// limit, so the collector works harder before the kernel kills the pod.
func checkMemory(t *testing.T, cfg *config.Config, limit string) {
	t.Helper()
	bytes, err := quantity(limit)
	switch {
	case err != nil:
		t.Errorf("memory limit %q: %v", limit, err)
	case cfg.MemoryLimit > 0 && bytes <= cfg.MemoryLimit:
		t.Errorf("memory limit %s is not above the gateway's memory_limit (%d bytes)", limit, cfg.MemoryLimit)
	}
}

// quantity parses the binary-suffixed Kubernetes memory quantities the
// manifests use (512Mi, 1Gi).
func quantity(s string) (int64, error) {
	for suffix, mul := range map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v * mul, err
		}
	}
	return 0, fmt.Errorf("want a number with Ki, Mi or Gi")
}
