package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
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
	cur, err := crdRevision(&unstructured.Unstructured{Object: crd})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(crd, strconv.Itoa(cur+1), "metadata", "annotations", casinov1alpha1.AnnotationCRDRevision); err != nil {
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

	// An older chart upgraded in another namespace (this revision, without
	// the field): the cluster's newer CRD is kept, so the Casino's field is
	// neither unserved nor pruned on its next write.
	out.Reset()
	if err := applyCRDs(t.Context(), []string{"-f", crdFile}, load, &out); err != nil {
		t.Fatalf("apply-crds of the older chart: %v", err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("casinos.casino.fairplay.dev kept: the cluster's is revision %d, this chart's %d", cur+1, cur)) {
		t.Fatalf("output: %q", out.String())
	}
	if again := getCRD(t, c); again.GetResourceVersion() != rv {
		t.Fatalf("the older chart's apply wrote the newer CRD (resourceVersion %s -> %s)", rv, again.GetResourceVersion())
	}
	if err := unstructured.SetNestedField(casino.Object, "v3", "spec", "image"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(t.Context(), casino); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(casino.Object, "spec", "newField"); v != "kept" {
		t.Fatalf("spec.newField = %q after the older chart's upgrade and a write: pruned", v)
	}
}

// crdSchemas pins each CRD revision (casinov1alpha1.AnnotationCRDRevision)
// to the SHA-256 of its generated spec, as JSON. The upgrade hook keeps a
// CRD of a higher revision than its chart's, so a change of the CRD under
// the same revision would never reach a cluster that has that revision.
var crdSchemas = map[int]string{
	1: "112bd77ef1eb1933367ce872ff74c6bc096bdc8f1be3ae5cc351da5c0dfb909a",
	2: "45e9c12cca4d9c67f4c8078f6e656e338a3bb54af39efcb6ade142417c8c5e4b", // spec.networkPolicy
}

// TestCRDRevisionFollowsTheSchema: the generated CRD's revision is the
// highest pinned, and its spec is the one pinned for it. A change of the
// CRD fails here until the revision is raised.
func TestCRDRevisionFollowsTheSchema(t *testing.T) {
	t.Parallel()
	crds, err := readCRDs(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := crdRevision(crds[0])
	if err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(crds[0].Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(spec))
	top := slices.Max(slices.Collect(maps.Keys(crdSchemas)))
	switch {
	case rev != top:
		t.Fatalf("the CRD is revision %d, the highest pinned is %d", rev, top)
	case crdSchemas[rev] != sum:
		t.Fatalf("the CRD changed under revision %d: raise the revision in the +kubebuilder:metadata:annotations "+
			"marker on Casino (api/v1alpha1/casino_types.go) to %d, run make manifests, and pin %d: %q here",
			rev, rev+1, rev+1, sum)
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
