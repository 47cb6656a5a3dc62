package controller

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

const chartDir = "../../charts/fairplay"

// renderChart runs `helm template` (the pinned bin/helm) and decodes the
// objects it prints.
func renderChart(t *testing.T, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	helm, err := filepath.Abs("../../bin/helm")
	must(t, err)
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("%s: install it with hack/tools.sh helm", helm)
	}
	cmd := exec.Command(helm, append([]string{"template", "fairplay", chartDir, "--namespace", namespace,
		"--include-crds", "--kube-version", "1.36.3"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decode helm output: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, &u)
		}
	}
	return objs
}

// TestHelmChartObjectsAreValid renders the chart with the default and the
// fully-populated values and has the envtest API server validate every object
// (server-side apply, dry run): the CRD, RBAC, the operator Deployment, the
// dashboards ConfigMap, the ServiceMonitor and the Casino built from values,
// which meets the CRD's OpenAPI and CEL rules.
func TestHelmChartObjectsAreValid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"default values", nil, []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "Service", "ConfigMap", "Casino"}},
		{"full values", []string{"-f", chartDir + "/ci/full-values.yaml"}, []string{"ServiceMonitor", "Casino", "ConfigMap"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			objs := renderChart(t, e.ns, tc.args...)
			kinds := map[string]int{}
			for _, u := range objs {
				kinds[u.GetKind()]++
				if ns := u.GetNamespace(); ns != "" && ns != e.ns {
					err := k8sClient.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
					if err != nil && !apierrors.IsAlreadyExists(err) {
						t.Fatal(err)
					}
				}
				err := k8sClient.Apply(e.ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
					client.FieldOwner("helm-test"), client.ForceOwnership, client.DryRunAll)
				if err != nil {
					t.Errorf("%s %s rejected by the API server: %v", u.GetKind(), u.GetName(), err)
				}
			}
			for _, k := range tc.want {
				if kinds[k] == 0 {
					t.Errorf("no %s rendered (got %v)", k, kinds)
				}
			}
			t.Logf("%d objects validated: %v", len(objs), kinds)
		})
	}
}

// TestHelmChartMatchesGeneratedManifests: the chart's CRD and ClusterRole
// rules are the generated config/ files (`make chart-crds`), so the chart
// grants exactly what the +kubebuilder:rbac markers ask for.
func TestHelmChartMatchesGeneratedManifests(t *testing.T) {
	t.Parallel()
	for src, dst := range map[string]string{
		"../../config/crd/bases/casino.fairplay.dev_casinos.yaml": chartDir + "/crds/casino.fairplay.dev_casinos.yaml",
		"../../config/rbac/role.yaml":                             chartDir + "/files/manager-role.yaml",
	} {
		a, err := os.ReadFile(src)
		must(t, err)
		b, err := os.ReadFile(dst)
		must(t, err)
		if !bytes.Equal(a, b) {
			t.Errorf("%s is stale: run `make chart-crds`", dst)
		}
	}

	var generated rbacv1.ClusterRole
	raw, err := os.ReadFile("../../config/rbac/role.yaml")
	must(t, err)
	must(t, yaml.Unmarshal(raw, &generated))
	for _, u := range renderChart(t, "fairplay") {
		if u.GetKind() != "ClusterRole" {
			continue
		}
		var rendered rbacv1.ClusterRole
		must(t, runtimeFromUnstructured(u, &rendered))
		if !apiequality.Semantic.DeepEqual(rendered.Rules, generated.Rules) {
			t.Fatalf("chart ClusterRole rules differ from config/rbac/role.yaml:\n%+v\n%+v", rendered.Rules, generated.Rules)
		}
		return
	}
	t.Fatal("the chart renders no ClusterRole")
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	raw, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return yaml.Unmarshal(raw, into)
}
