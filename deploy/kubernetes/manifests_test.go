// Package kubernetes checks the hosted gateway's manifests offline: each file
// decodes strictly (an unknown or misspelt field fails) into the Kubernetes
// API type its kind names, and the settings the gateway depends on are
// there. It is its own module so the server's module does not carry the
// Kubernetes API types.
package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors"`
	} `json:"labels"`
	Images []struct {
		Name   string `json:"name"`
		NewTag string `json:"newTag"`
	} `json:"images"`
	Resources []string `json:"resources"`
}

// strict decodes YAML into v, failing on fields v does not have.
func strict(b []byte, v any) error {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

type objects struct {
	deploy *appsv1.Deployment
	svc    *corev1.Service
	cm     *corev1.ConfigMap
	secret *corev1.Secret // the introspection client
	// secrets are every Secret, by name.
	secrets map[string]*corev1.Secret
	pdb     *policyv1.PodDisruptionBudget
	hpa     *autoscalingv2.HorizontalPodAutoscaler
	ns      *corev1.Namespace
}

func load(t *testing.T) (kustomization, objects) {
	t.Helper()
	b, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := strict(b, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	var o objects
	for _, f := range k.Resources {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(b, &meta); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var v any
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 Deployment":
			o.deploy = new(appsv1.Deployment)
			v = o.deploy
		case "v1 Service":
			o.svc = new(corev1.Service)
			v = o.svc
		case "v1 ConfigMap":
			o.cm = new(corev1.ConfigMap)
			v = o.cm
		case "v1 Secret":
			sec := new(corev1.Secret)
			if err := strict(b, sec); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.secrets == nil {
				o.secrets = map[string]*corev1.Secret{}
			}
			o.secrets[sec.Name] = sec
			if sec.Name == "pdpp-mcp-introspection" {
				o.secret = sec
			}
			v = sec
		case "policy/v1 PodDisruptionBudget":
			o.pdb = new(policyv1.PodDisruptionBudget)
			v = o.pdb
		case "autoscaling/v2 HorizontalPodAutoscaler":
			o.hpa = new(autoscalingv2.HorizontalPodAutoscaler)
			v = o.hpa
		case "v1 Namespace":
			o.ns = new(corev1.Namespace)
			v = o.ns
		default:
			t.Fatalf("%s: unexpected %s %s", f, meta.APIVersion, meta.Kind)
		}
		if err := strict(b, v); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if o.deploy == nil || o.svc == nil || o.cm == nil || o.secret == nil || o.pdb == nil || o.hpa == nil {
		t.Fatalf("kustomization.yaml misses a kind: %+v", k.Resources)
	}
	return k, o
}

func TestStrictDecodeRejectsTypos(t *testing.T) {
	// The check must be able to fail: a misspelt field is an error.
	bad := []byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replica: 3\n")
	if err := strict(bad, new(appsv1.Deployment)); err == nil {
		t.Fatal("a misspelt field decoded")
	}
}

func TestManifests(t *testing.T) {
	k, o := load(t)
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization: %s %s", k.APIVersion, k.Kind)
	}
	d := o.deploy
	sel := d.Spec.Selector.MatchLabels
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"several replicas", d.Spec.Replicas != nil && *d.Spec.Replicas >= 2},
		{"pod labels match the selector", mapHas(d.Spec.Template.Labels, sel)},
		{"service selects the pods", mapHas(d.Spec.Template.Labels, o.svc.Spec.Selector)},
		{"PDB selects the pods", o.pdb.Spec.Selector != nil && mapHas(d.Spec.Template.Labels, o.pdb.Spec.Selector.MatchLabels)},
		{"PDB leaves room to drain", o.pdb.Spec.MinAvailable != nil && o.pdb.Spec.MinAvailable.IntValue() < int(*d.Spec.Replicas)},
		{"HPA scales the deployment", o.hpa.Spec.ScaleTargetRef.Kind == "Deployment" && o.hpa.Spec.ScaleTargetRef.Name == d.Name},
		{"HPA on CPU", len(o.hpa.Spec.Metrics) > 0 && o.hpa.Spec.Metrics[0].Resource != nil && o.hpa.Spec.Metrics[0].Resource.Name == corev1.ResourceCPU},
		{"HPA floor is the replica count", o.hpa.Spec.MinReplicas != nil && *o.hpa.Spec.MinReplicas == *d.Spec.Replicas},
		{"pod runs as nonroot", d.Spec.Template.Spec.SecurityContext != nil && ptrTrue(d.Spec.Template.Spec.SecurityContext.RunAsNonRoot)},
		{"no service account token", d.Spec.Template.Spec.AutomountServiceAccountToken != nil && !*d.Spec.Template.Spec.AutomountServiceAccountToken},
	} {
		if !c.ok {
			t.Errorf("%s: no", c.what)
		}
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe: want GET %s on the http port, got %+v", name, path, p)
		}
	}
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("liveness", c.LivenessProbe, "/healthz")
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("no %s request", r)
		}
		if _, ok := c.Resources.Limits[r]; !ok {
			t.Errorf("no %s limit", r)
		}
	}
	sc := c.SecurityContext
	if sc == nil || !ptrTrue(sc.ReadOnlyRootFilesystem) || !ptrTrue(sc.RunAsNonRoot) || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container security context: %+v", sc)
	}
	// Configuration: the public URL and RS URL from the ConfigMap, the
	// introspection client from the Secret, the secret itself as a file.
	for _, key := range []string{"PDPP_MCP_PUBLIC_URL", "PDPP_PROVIDER_URL", "PDPP_MCP_HTTP"} {
		if o.cm.Data[key] == "" {
			t.Errorf("ConfigMap has no %s", key)
		}
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[0].ConfigMapRef.Name != o.cm.Name {
		t.Errorf("container does not read the ConfigMap: %+v", c.EnvFrom)
	}
	secretRefs := 0
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			secretRefs++
			if e.ValueFrom.SecretKeyRef.Name != o.secret.Name || o.secret.StringData[e.ValueFrom.SecretKeyRef.Key] == "" {
				t.Errorf("env %s: key %q not in Secret %s", e.Name, e.ValueFrom.SecretKeyRef.Key, o.secret.Name)
			}
		}
		if e.Name == "PDPP_MCP_INTROSPECTION_CLIENT_SECRET" {
			t.Error("the client secret belongs in a file, not the environment")
		}
	}
	if secretRefs == 0 {
		t.Error("no env var comes from the Secret")
	}
	mounted := false
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == o.secret.Name {
			mounted = true
		}
	}
	if !mounted {
		t.Error("the introspection Secret is not mounted")
	}
	// The image kustomize pins is the one the Deployment names.
	if len(k.Images) != 1 || c.Image != fmt.Sprintf("%s:%s", k.Images[0].Name, k.Images[0].NewTag) {
		t.Errorf("image %q, kustomization %+v", c.Image, k.Images)
	}
}

// A replica leaves the Service before it stops listening, every replica
// signs cursors with one key from a mounted Secret, and the grace period
// covers the delay and the shutdown timeout.
func TestScaleOut(t *testing.T) {
	_, o := load(t)
	spec := o.deploy.Spec.Template.Spec
	c := spec.Containers[0]
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds < 5 {
		t.Fatalf("no preStop sleep of at least 5 s (the image has no shell, so not an exec): %+v", c.Lifecycle)
	}
	delay := c.Lifecycle.PreStop.Sleep.Seconds
	shutdown, err := time.ParseDuration(o.cm.Data["PDPP_MCP_SHUTDOWN_TIMEOUT"])
	if err != nil {
		t.Fatalf("PDPP_MCP_SHUTDOWN_TIMEOUT: %v", err)
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds <= delay+int64(shutdown.Seconds()) {
		t.Errorf("terminationGracePeriodSeconds %v does not cover the %d s preStop delay plus the %s shutdown timeout",
			spec.TerminationGracePeriodSeconds, delay, shutdown)
	}
	if spec.SecurityContext == nil || spec.SecurityContext.FSGroup == nil || spec.SecurityContext.RunAsUser == nil {
		t.Fatal("no fsGroup: the nonroot user could not read the mounted Secrets")
	}
	var keyFile string
	for _, e := range c.Env {
		if e.Name == "PDPP_MCP_CURSOR_KEY_FILE" {
			keyFile = e.Value
		}
	}
	if keyFile == "" {
		t.Fatal("PDPP_MCP_CURSOR_KEY_FILE is not set: replicas would refuse each other's cursors")
	}
	dir, name := path.Split(keyFile)
	var volume string
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) == path.Clean(dir) {
			volume = m.Name
		}
	}
	found := false
	for _, v := range spec.Volumes {
		if v.Name != volume || v.Secret == nil {
			continue
		}
		sec := o.secrets[v.Secret.SecretName]
		if sec == nil {
			t.Fatalf("volume %s mounts Secret %s, which the kustomization does not make", v.Name, v.Secret.SecretName)
		}
		for _, it := range v.Secret.Items {
			if it.Path == name && sec.StringData[it.Key] != "" {
				found = true
			}
		}
		if v.Secret.DefaultMode == nil || *v.Secret.DefaultMode&0o007 != 0 {
			t.Errorf("cursor key mounted with mode %v: the gateway refuses a key other users may read", v.Secret.DefaultMode)
		}
	}
	if !found {
		t.Errorf("%s is not a key of a mounted Secret", keyFile)
	}
}

func mapHas(m, sub map[string]string) bool {
	if len(sub) == 0 {
		return false
	}
	for k, v := range sub {
		if m[k] != v {
			return false
		}
	}
	return true
}

func ptrTrue(b *bool) bool { return b != nil && *b }
