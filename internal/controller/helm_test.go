package controller

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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

// TestHelmChartObjectsAreValid renders the chart with the default values
// (namespaced install), in cluster-wide mode and with the fully-populated
// values, and has the envtest API server validate every object (server-side
// apply, dry run): the CRD, RBAC, the operator Deployment, the dashboards
// ConfigMap, the ServiceMonitor and the Casino built from values, which meets
// the CRD's OpenAPI and CEL rules. The namespaced install renders nothing
// cluster-scoped but the CRD.
func TestHelmChartObjectsAreValid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		want   []string
		absent []string
	}{
		{"default values (namespaced)", nil,
			[]string{"CustomResourceDefinition", "ServiceAccount", "Role", "RoleBinding", "Deployment", "Service", "ConfigMap", "Casino", "NetworkPolicy"},
			[]string{"ClusterRole", "ClusterRoleBinding"}},
		{"cluster-wide", []string{"--set", "operator.clusterWide=true"},
			[]string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"}, nil},
		{"full values", []string{"-f", chartDir + "/ci/full-values.yaml"}, []string{"ServiceMonitor", "Casino", "ConfigMap", "ClusterRole", "NetworkPolicy", "PodDisruptionBudget", "PrometheusRule"}, nil},
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
			for _, k := range tc.absent {
				for _, u := range objs {
					// The CRD-upgrade hook's ClusterRole (get/patch on the
					// chart's own CRD, during `helm upgrade` only) is not the
					// operator's RBAC.
					// Nor are the secure metrics' token and access reviews
					// (cluster-scoped APIs, so a ClusterRole even here).
					_, hook := u.GetAnnotations()["helm.sh/hook"]
					metricsAuth := u.GetLabels()[labelComponent] == "metrics"
					if u.GetKind() == k && !hook && !metricsAuth {
						t.Errorf("%s %s rendered (got %v)", k, u.GetName(), kinds)
					}
				}
			}
			t.Logf("%d objects validated: %v", len(objs), kinds)
		})
	}
}

// TestHelmChartMatchesGeneratedManifests: the chart's CRD and its manager
// rules (the ClusterRole of the cluster-wide install, the Role of the
// namespaced one) are the generated config/ files (`make chart-crds`), so the
// chart grants exactly what the +kubebuilder:rbac markers ask for.
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
	for kind, args := range map[string][]string{
		"ClusterRole": {"--set", "operator.clusterWide=true"},
		"Role":        nil,
	} {
		found := false
		for _, u := range renderChart(t, "fairplay", args...) {
			if u.GetKind() != kind || u.GetName() != "fairplay-operator" {
				continue
			}
			found = true
			var rendered rbacv1.ClusterRole // a Role's rules have the same shape
			must(t, runtimeFromUnstructured(u, &rendered))
			if !apiequality.Semantic.DeepEqual(rendered.Rules, generated.Rules) {
				t.Errorf("chart %s rules differ from config/rbac/role.yaml:\n%+v\n%+v", kind, rendered.Rules, generated.Rules)
			}
		}
		if !found {
			t.Errorf("the chart (%v) renders no %s fairplay-operator", args, kind)
		}
	}
}

// TestManagerRulesAreNamespaced: a Role grants only namespaced resources,
// so every resource of the generated rules must be namespaced (or a
// subresource of one) for the namespaced install to work. The API server's
// discovery decides.
func TestManagerRulesAreNamespaced(t *testing.T) {
	t.Parallel()
	var generated rbacv1.ClusterRole
	raw, err := os.ReadFile("../../config/rbac/role.yaml")
	must(t, err)
	must(t, yaml.Unmarshal(raw, &generated))
	mapper := k8sClient.RESTMapper()
	for _, rule := range generated.Rules {
		for _, group := range rule.APIGroups {
			for _, res := range rule.Resources {
				resource, _, _ := strings.Cut(res, "/")
				gvk, err := mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
				if err != nil {
					t.Errorf("%s.%s: %v", resource, group, err)
					continue
				}
				mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				must(t, err)
				if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
					t.Errorf("%s.%s is cluster-scoped: a namespaced install's Role cannot grant it", resource, group)
				}
			}
		}
	}
}

// renderedDeployment is the chart's operator Deployment rendered with args.
func renderedDeployment(t *testing.T, namespace string, args ...string) *appsv1.Deployment {
	t.Helper()
	for _, u := range renderChart(t, namespace, args...) {
		if u.GetKind() == "Deployment" {
			var d appsv1.Deployment
			must(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d))
			return &d
		}
	}
	t.Fatal("the chart renders no Deployment")
	return nil
}

// TestChartOperatorFlags: the namespaced install passes the release
// namespace as --watch-namespace, the cluster-wide one nothing; the
// operator's metrics and probes are on their own ports, and the metrics
// Service reaches only the metrics port.
func TestChartOperatorFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args  []string
		watch string
	}{
		{nil, "--watch-namespace=games"},
		{[]string{"--set", "operator.clusterWide=true"}, ""},
	} {
		d := renderedDeployment(t, "games", tt.args...)
		ctr := d.Spec.Template.Spec.Containers[0]
		watch := slices.IndexFunc(ctr.Args, func(a string) bool { return strings.HasPrefix(a, "--watch-namespace") })
		switch {
		case tt.watch == "" && watch >= 0:
			t.Errorf("%v: cluster-wide operator has %s", tt.args, ctr.Args[watch])
		case tt.watch != "" && (watch < 0 || ctr.Args[watch] != tt.watch):
			t.Errorf("%v: args %v, want %s", tt.args, ctr.Args, tt.watch)
		}
		// Secure metrics (HTTPS with the authn/authz filter) by default.
		if !slices.Contains(ctr.Args, "--metrics-bind-address=:8443") || !slices.Contains(ctr.Args, "--metrics-secure=true") ||
			!slices.Contains(ctr.Args, "--health-probe-bind-address=:8081") {
			t.Errorf("args = %v", ctr.Args)
		}
		ports := map[string]int32{}
		for _, p := range ctr.Ports {
			ports[p.Name] = p.ContainerPort
		}
		if ports["metrics"] != 8443 || ports["probes"] != 8081 || len(ports) != 2 {
			t.Errorf("operator ports = %v", ports)
		}
		if ctr.LivenessProbe.HTTPGet.Port.StrVal != "probes" || ctr.ReadinessProbe.HTTPGet.Port.StrVal != "probes" {
			t.Errorf("probes not on the probes port: %v %v", ctr.LivenessProbe.HTTPGet.Port, ctr.ReadinessProbe.HTTPGet.Port)
		}
	}
	for _, u := range renderChart(t, "games") {
		if u.GetKind() != "Service" {
			continue
		}
		var svc corev1.Service
		must(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &svc))
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" || svc.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("operator Service %s ports = %+v", svc.Name, svc.Spec.Ports)
		}
	}
}

// TestChartImagePullPolicy: image.pullPolicy=Never (images imported into
// the node) reaches the operator and the Casino's pods; casino.imagePullPolicy
// overrides it for the Casino.
func TestChartImagePullPolicy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args           []string
		operator, pods string
	}{
		{nil, "IfNotPresent", "IfNotPresent"},
		{[]string{"--set", "image.pullPolicy=Never"}, "Never", "Never"},
		{[]string{"--set", "image.pullPolicy=Never", "--set", "casino.imagePullPolicy=Always"}, "Never", "Always"},
	} {
		var operator, pods string
		for _, u := range renderChart(t, "games", tt.args...) {
			switch u.GetKind() {
			case "Deployment":
				var d appsv1.Deployment
				must(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d))
				operator = string(d.Spec.Template.Spec.Containers[0].ImagePullPolicy)
			case "Casino":
				pods, _, _ = unstructured.NestedString(u.Object, "spec", "imagePullPolicy")
			}
		}
		if operator != tt.operator || pods != tt.pods {
			t.Errorf("%v: operator %q, Casino %q; want %q, %q", tt.args, operator, pods, tt.operator, tt.pods)
		}
	}
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	raw, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return yaml.Unmarshal(raw, into)
}

// chartNotes renders the chart's NOTES.txt as `helm install` prints it: a
// server-side dry run against the envtest API server (helm template does
// not render notes, and a client-side dry run still asks a cluster for its
// version), as a cluster admin.
func chartNotes(t *testing.T, namespace string, args ...string) string {
	t.Helper()
	helm, err := filepath.Abs("../../bin/helm")
	must(t, err)
	user, err := testEnv.AddUser(envtest.User{Name: "chart-notes", Groups: []string{"system:masters"}}, restConfig)
	must(t, err)
	kubeconfig, err := user.KubeConfig()
	must(t, err)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	must(t, os.WriteFile(path, kubeconfig, 0o600))
	cmd := exec.Command(helm, append([]string{"install", "fairplay", chartDir, "--namespace", namespace,
		"--dry-run=server", "--kubeconfig", path}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm install --dry-run=server: %v\n%s", err, stderr.String())
	}
	_, notes, ok := strings.Cut(string(out), "\nNOTES:\n")
	if !ok {
		t.Fatalf("no NOTES in helm's output:\n%s", out)
	}
	return notes
}

// TestChartNotesWarnOfAnIngressWithoutTLS: an Ingress without a TLS Secret
// means cookies without Secure and no HSTS (the operator sets
// FAIRPLAY_SECURE_COOKIES only for a TLS Ingress), which the install notes
// say, with the way to turn them on when TLS ends in front of the Ingress.
func TestChartNotesWarnOfAnIngressWithoutTLS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const warning = "WARNING: the Ingress has no TLS Secret"
	for _, tc := range []struct {
		name string
		args []string
		warn bool
	}{
		{"no Ingress", nil, false},
		{"Ingress without TLS", []string{"--set", "casino.ingress.enabled=true"}, true},
		{"Ingress with TLS", []string{"--set", "casino.ingress.enabled=true", "--set", "casino.ingress.tlsSecretName=play-tls"}, false},
		{"TLS in front, said in env", []string{"--set", "casino.ingress.enabled=true",
			"--set", "casino.env[0].name=FAIRPLAY_SECURE_COOKIES", "--set-string", "casino.env[0].value=true"}, false},
	} {
		notes := chartNotes(t, e.ns, tc.args...)
		if got := strings.Contains(notes, warning); got != tc.warn {
			t.Errorf("%s: warning shown %v, want %v:\n%s", tc.name, got, tc.warn, notes)
		}
		if tc.warn && !strings.Contains(notes, "name: FAIRPLAY_SECURE_COOKIES") {
			t.Errorf("%s: the warning does not say how to turn Secure cookies on:\n%s", tc.name, notes)
		}
	}
}
