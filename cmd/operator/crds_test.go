package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

const crdFile = "../../config/crd/bases/casino.fairplay.dev_casinos.yaml"

// startEnvtest runs a kube-apiserver with the generated CRD installed, as
// `helm install` leaves it (from the chart's crds/).
func startEnvtest(t *testing.T) *rest.Config {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run KUBEBUILDER_ASSETS=$(hack/envtest.sh) go test ./cmd/operator/")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Dir(crdFile)}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}

func getCRD(t *testing.T, c client.Client) *unstructured.Unstructured {
	t.Helper()
	var crd unstructured.Unstructured
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := c.Get(context.Background(), client.ObjectKey{Name: "casinos.casino.fairplay.dev"}, &crd); err != nil {
		t.Fatal(err)
	}
	return &crd
}

// TestApplyCRDsUpgradesTheCRD is the chart's pre-upgrade hook against a real
// API server: a chart whose CRD gained a spec field is applied over the
// installed one, the field is served at once (a Casino using it keeps it
// instead of having it pruned), and a second apply changes nothing.
func TestApplyCRDsUpgradesTheCRD(t *testing.T) {
	cfg := startEnvtest(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The next chart version: spec.newField added to the generated CRD.
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	v0 := versions[0].(map[string]any)
	if err := unstructured.SetNestedField(v0, map[string]any{"type": "string", "description": "added by the next chart version"},
		"schema", "openAPIV3Schema", "properties", "spec", "properties", "newField"); err != nil {
		t.Fatal(err)
	}
	versions[0] = v0
	if err := unstructured.SetNestedSlice(crd, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	next, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "casino.fairplay.dev_casinos.yaml"), next, 0o600); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	load := func() (*rest.Config, error) { return cfg, nil }
	if err := applyCRDs(t.Context(), []string{"-f", dir}, load, &out); err != nil {
		t.Fatalf("apply-crds: %v", err)
	}
	if !strings.Contains(out.String(), "casinos.casino.fairplay.dev applied and established") {
		t.Fatalf("output: %q", out.String())
	}
	applied := getCRD(t, c)
	got, _, _ := unstructured.NestedSlice(applied.Object, "spec", "versions")
	if _, ok, _ := unstructured.NestedMap(got[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "newField"); !ok {
		t.Fatal("spec.newField is not in the applied CRD")
	}

	casino := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "casino.fairplay.dev/v1alpha1", "kind": "Casino",
		"metadata": map[string]any{"name": "upgraded", "namespace": "default"},
		"spec": map[string]any{
			"image":    "registry.example/fairplay:v2",
			"newField": "kept",
			"database": map[string]any{"urlSecretRef": map[string]any{"name": "db", "key": "uri"}},
			"redis":    map[string]any{"urlSecretRef": map[string]any{"name": "redis", "key": "url"}},
		},
	}}
	if err := c.Create(t.Context(), casino); err != nil {
		t.Fatalf("create a Casino with the new field: %v", err)
	}
	if v, _, _ := unstructured.NestedString(casino.Object, "spec", "newField"); v != "kept" {
		t.Fatalf("spec.newField = %q after create: the API server pruned it", v)
	}

	rv := applied.GetResourceVersion()
	if err := applyCRDs(t.Context(), []string{"-f", dir}, load, &out); err != nil {
		t.Fatalf("second apply-crds: %v", err)
	}
	if again := getCRD(t, c); again.GetResourceVersion() != rv {
		t.Fatalf("re-applying the same CRD wrote it again (resourceVersion %s -> %s)", rv, again.GetResourceVersion())
	}
}

// TestApplyCRDsRefusesOtherObjects: a manifest that is not a CRD (a wrong
// mount), a missing path and a missing -f fail with a clear error and
// change nothing.
func TestApplyCRDsRefusesOtherObjects(t *testing.T) {
	cfg := startEnvtest(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rv := getCRD(t, c).GetResourceVersion()
	dir := t.TempDir()
	bad := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: default\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() (*rest.Config, error) { return cfg, nil }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", bad}, "is not a CustomResourceDefinition"},
		{[]string{"-f", filepath.Join(dir, "absent")}, "no such file"},
		{[]string{"-f", t.TempDir()}, "no CustomResourceDefinition found"},
		{nil, "usage: operator apply-crds"},
	} {
		err := applyCRDs(t.Context(), tc.args, load, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("apply-crds %v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	if got := getCRD(t, c).GetResourceVersion(); got != rv {
		t.Fatalf("a refused apply changed the CRD (resourceVersion %s -> %s)", rv, got)
	}
	var cms unstructured.UnstructuredList
	cms.SetAPIVersion("v1")
	cms.SetKind("ConfigMapList")
	if err := c.List(t.Context(), &cms, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if cm.GetName() == "x" {
			t.Fatal("the ConfigMap of a refused manifest was created")
		}
	}
}
