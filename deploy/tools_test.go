package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The checks the deployment tools themselves can make without a Docker
// engine or a cluster. Each skips with one line when its tool is missing.

// run runs a tool in this folder and fails the test with its output when
// it fails.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	t.Logf("%s %v: ok\n%s", name, args, out)
}

// TestDockerComposeConfig has Compose parse and validate
// docker-compose.yml against its own schema (no engine needed).
func TestDockerComposeConfig(t *testing.T) {
	var compose []string
	if exec.Command("docker", "compose", "version").Run() == nil {
		compose = []string{"docker", "compose"}
	} else if p, err := exec.LookPath("docker-compose"); err == nil {
		compose = []string{p}
	} else {
		t.Skip("docker compose is not installed: docker-compose.yml is only parsed and cross-checked here")
	}
	args := append(compose[1:], "-f", "docker-compose.yml", "config", "-q")
	run(t, compose[0], args...)
}

// TestKubectlDryRun validates the manifests with kubectl's client-side dry
// run, which needs an API server for the schemas: it runs only when
// MODELGATE_TEST_KUBECTL is set, against the current kubectl context.
func TestKubectlDryRun(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed: the manifests are only parsed and cross-checked here")
	}
	if os.Getenv("MODELGATE_TEST_KUBECTL") == "" {
		t.Skip("kubectl --dry-run=client needs an API server for its schemas; set MODELGATE_TEST_KUBECTL=1 to use the current context")
	}
	run(t, "kubectl", "apply", "--dry-run=client", "--validate=strict", "-f", "k8s")
}

// TestKubeconform validates the manifests against the Kubernetes JSON
// schemas, read from MODELGATE_KUBECONFORM_SCHEMAS (a local copy: the test
// fetches nothing).
func TestKubeconform(t *testing.T) {
	if _, err := exec.LookPath("kubeconform"); err != nil {
		t.Skip("kubeconform is not installed: the manifests are only parsed and cross-checked here")
	}
	schemas := os.Getenv("MODELGATE_KUBECONFORM_SCHEMAS")
	if schemas == "" {
		t.Skip("set MODELGATE_KUBECONFORM_SCHEMAS to a local schema location (kubeconform's -schema-location); the test downloads nothing")
	}
	files, err := filepath.Glob(filepath.Join("k8s", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, "kubeconform", append([]string{"-strict", "-summary", "-schema-location", schemas}, files...)...)
}
