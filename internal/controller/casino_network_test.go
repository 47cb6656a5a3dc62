package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

func serviceMonitorObject() client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ServiceMonitorGVK)
	return u
}

func TestDesiredIngress(t *testing.T) {
	t.Parallel()
	c := fullCasino()
	c.Spec.Ingress.ClassName = "nginx"
	c.Spec.Ingress.Annotations = map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}
	ing := desiredIngress(c)
	if ing.Spec.Rules[0].Host != "play.example.com" || ptr.Deref(ing.Spec.IngressClassName, "") != "nginx" {
		t.Fatalf("ingress = %+v", ing.Spec)
	}
	// Only the app's port: /metrics stays inside the cluster.
	if paths := ing.Spec.Rules[0].HTTP.Paths; len(ing.Spec.Rules) != 1 || len(paths) != 1 {
		t.Fatalf("rules = %+v", ing.Spec.Rules)
	}
	backend := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
	if backend.Name != "web" || backend.Port.Name != "http" || ing.Spec.DefaultBackend != nil {
		t.Fatalf("backend = %+v", backend)
	}
	if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "play-tls" || ing.Spec.TLS[0].Hosts[0] != "play.example.com" {
		t.Fatalf("tls = %+v", ing.Spec.TLS)
	}
	if ing.Annotations["cert-manager.io/cluster-issuer"] != "letsencrypt" {
		t.Fatalf("annotations = %v", ing.Annotations)
	}
	c.Spec.Ingress = nil
	if desiredIngress(c) != nil {
		t.Fatal("ingress without spec.ingress")
	}
}

func TestDesiredPDB(t *testing.T) {
	t.Parallel()
	for replicas, want := range map[int32]bool{0: false, 1: false, 2: true, 5: true} {
		c := fullCasino()
		c.Spec.Replicas = ptr.To(replicas)
		if got := desiredPDB(c) != nil; got != want {
			t.Errorf("replicas %d: pdb %v, want %v", replicas, got, want)
		}
	}
	pdb := desiredPDB(fullCasino())
	if pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels[labelComponent] != componentServer {
		t.Fatalf("pdb = %+v", pdb.Spec)
	}
}

func TestDesiredService(t *testing.T) {
	t.Parallel()
	svc := desiredService(fullCasino())
	if len(svc.Spec.Ports) != 2 {
		t.Fatalf("service ports = %+v", svc.Spec.Ports)
	}
	p := svc.Spec.Ports[0]
	if p.Name != "http" || p.Port != 80 || p.TargetPort.StrVal != "http" || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Fatalf("service = %+v", svc.Spec)
	}
	if m := svc.Spec.Ports[1]; m.Name != "metrics" || m.Port != 9090 || m.TargetPort.StrVal != "metrics" {
		t.Fatalf("service metrics port = %+v", m)
	}
	if svc.Spec.Selector[labelInstance] != "web" {
		t.Fatalf("selector = %v", svc.Spec.Selector)
	}
}

func TestServiceMonitorInstalled(t *testing.T) {
	t.Parallel()
	// Without the CRD (a static mapper that does not know the kind).
	empty := meta.NewDefaultRESTMapper([]schema.GroupVersion{ServiceMonitorGVK.GroupVersion()})
	if ok, err := serviceMonitorInstalled(empty); err != nil || ok {
		t.Fatalf("empty mapper: installed=%v err=%v", ok, err)
	}
	// With it: the envtest API server serves the stand-in CRD from testdata.
	if ok, err := serviceMonitorInstalled(k8sClient.RESTMapper()); err != nil || !ok {
		t.Fatalf("envtest: installed=%v err=%v", ok, err)
	}
}

// TestServiceMonitorFollowsTheSpec: enabled makes one that scrapes the
// Service's metrics port at /metrics with the given labels; disabled
// deletes it.
func TestServiceMonitorFollowsTheSpec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("mon", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.ServiceMonitor = &casinov1alpha1.ServiceMonitorSpec{Enabled: true, Labels: map[string]string{"release": "prometheus"}}
	})
	e.reconcile("mon")
	sm := serviceMonitorObject().(*unstructured.Unstructured)
	if !e.get("mon", sm) {
		t.Fatal("service monitor not created")
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("labels = %v", sm.GetLabels())
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("endpoints = %v", endpoints)
	}
	ep := endpoints[0].(map[string]any)
	if ep["port"] != "metrics" || ep["path"] != "/metrics" || ep["interval"] != "30s" {
		t.Errorf("endpoint = %v (interval should default to 30s)", ep)
	}

	e.update("mon", func(c *casinov1alpha1.Casino) { c.Spec.ServiceMonitor.Enabled = false })
	e.reconcile("mon")
	if e.get("mon", serviceMonitorObject()) {
		t.Fatal("service monitor kept after it was disabled")
	}
}

// TestMetricsStayOffThePublicPath follows every route into the server pods
// on the objects the API server holds after a reconcile: each Ingress path
// reaches the Service's app port and through it container port 8080 only;
// container port 9090 ("metrics") is reached only through the Service's
// metrics port, which is what the ServiceMonitor scrapes; the probes use the
// app port; and the server listens where the ports say.
func TestMetricsStayOffThePublicPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("public", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.Ingress = &casinov1alpha1.IngressSpec{Host: "play.example.com", TLSSecretName: "play-tls"}
		c.Spec.ServiceMonitor = &casinov1alpha1.ServiceMonitorSpec{Enabled: true}
	})
	e.reconcile("public")
	e.finishJob(migrationJobName(e.casino("public")), true)
	e.reconcile("public")

	var svc corev1.Service
	var ing networkingv1.Ingress
	sm := serviceMonitorObject().(*unstructured.Unstructured)
	if !e.get("public", &svc) || !e.get("public", &ing) || !e.get("public", sm) {
		t.Fatal("service, ingress or service monitor missing")
	}
	ctr := e.deployment("public").Spec.Template.Spec.Containers[0]
	containerPort := func(target intstr.IntOrString) int32 {
		if target.Type == intstr.Int {
			return target.IntVal
		}
		for _, p := range ctr.Ports {
			if p.Name == target.StrVal {
				return p.ContainerPort
			}
		}
		t.Fatalf("container has no port %q", target.StrVal)
		return 0
	}
	// viaService resolves a Service port (by name or number) to the
	// container port it forwards to.
	viaService := func(port networkingv1.ServiceBackendPort) int32 {
		for _, p := range svc.Spec.Ports {
			if (port.Name != "" && p.Name == port.Name) || (port.Name == "" && p.Port == port.Number) {
				return containerPort(p.TargetPort)
			}
		}
		t.Fatalf("service has no port %+v", port)
		return 0
	}

	if ing.Spec.DefaultBackend != nil {
		t.Fatalf("ingress has a default backend: %+v", ing.Spec.DefaultBackend)
	}
	public := map[int32]bool{}
	for _, rule := range ing.Spec.Rules {
		for _, path := range rule.HTTP.Paths {
			if path.Backend.Service == nil || path.Backend.Service.Name != "public" {
				t.Fatalf("ingress path %s goes to %+v", path.Path, path.Backend)
			}
			public[viaService(path.Backend.Service.Port)] = true
		}
	}
	if len(public) != 1 || !public[8080] {
		t.Fatalf("the ingress reaches container ports %v, want only 8080", public)
	}

	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("service monitor endpoints = %v", endpoints)
	}
	scraped, _ := endpoints[0].(map[string]any)["port"].(string)
	if got := viaService(networkingv1.ServiceBackendPort{Name: scraped}); got != 9090 {
		t.Fatalf("the service monitor scrapes container port %d, want 9090", got)
	}

	for _, p := range []*corev1.Probe{ctr.LivenessProbe, ctr.ReadinessProbe, ctr.StartupProbe} {
		if got := containerPort(p.HTTPGet.Port); got != 8080 {
			t.Errorf("probe %s on container port %d, want 8080", p.HTTPGet.Path, got)
		}
	}
	env := envMap(ctr.Env)
	if env["FAIRPLAY_HTTP_ADDR"] != ":8080" || env["FAIRPLAY_METRICS_ADDR"] != ":9090" {
		t.Fatalf("server listens on %q (app) and %q (metrics), want :8080 and :9090", env["FAIRPLAY_HTTP_ADDR"], env["FAIRPLAY_METRICS_ADDR"])
	}
}

// refuseIngressHost makes the API server refuse, in the env's namespace, an
// Ingress for host, as a cluster's admission does for a host another
// namespace claims (ingress-nginx's webhook, a policy engine): a
// ValidatingAdmissionPolicy, which the API server runs itself. It returns
// once a dry run of such an Ingress is refused, and removes the policy when
// the test ends.
func (e *env) refuseIngressHost(host string) {
	e.t.Helper()
	name := e.ns + "-host"
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": e.ns}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"},
							Resources: []string{"ingresses"}},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("!has(object.spec.rules) || object.spec.rules.all(r, !has(r.host) || r.host != %q)", host),
				Message:    "host " + host + " is already defined in ingress other/shop",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	must(e.t, k8sClient.Create(e.ctx, policy))
	must(e.t, k8sClient.Create(e.ctx, binding))
	e.t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), binding)
		_ = k8sClient.Delete(context.Background(), policy)
	})
	probe := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: e.ns},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "x", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			Rules: []networkingv1.IngressRule{{Host: host}}},
	}
	// The API server compiles a new policy in the background.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := k8sClient.Create(e.ctx, probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "already defined") {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the policy refusing host %s is not in force after 30s (last answer: %v)", host, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRefusedIngressDoesNotHoldTheRollUp: an Ingress the API server refuses
// is reported (Degraded, a Warning, an error for the back-off) but keeps
// neither the migrations nor the Deployment from rolling a new image: the
// way out of a bad release must not wait on an unrelated object. Found by a
// review: the network objects were written first and their error ended the
// reconcile, so one refused Ingress blocked every upgrade.
func TestRefusedIngressDoesNotHoldTheRollUp(t *testing.T) {
	t.Parallel()
	e := deployed(t, "refused")
	e.refuseIngressHost("taken.example.com")
	e.update("refused", func(c *casinov1alpha1.Casino) {
		c.Spec.Image = "registry.example/fairplay:v2"
		c.Spec.Ingress = &casinov1alpha1.IngressSpec{Host: "taken.example.com"}
		c.Spec.Replicas = ptr.To[int32](1) // no PodDisruptionBudget for one replica
	})
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "refused"}}
	refused := func() {
		t.Helper()
		if _, err := e.r.Reconcile(e.ctx, key); err == nil || !strings.Contains(err.Error(), "already defined") {
			t.Fatalf("reconcile with the Ingress refused: %v, want the refusal", err)
		}
	}
	refused()
	v2Job := migrationJobName(e.casino("refused"))
	if !e.get(v2Job, &batchv1.Job{}) {
		t.Fatalf("no migrations Job %s for v2 while the Ingress is refused", v2Job)
	}
	// The objects after the refused one are still reconciled.
	if e.get("refused", &policyv1.PodDisruptionBudget{}) {
		t.Errorf("the PodDisruptionBudget of two replicas is kept for one while the Ingress is refused")
	}
	e.finishJob(v2Job, true)
	refused()
	if img := serverImage(e.deployment("refused")); img != "registry.example/fairplay:v2" {
		t.Fatalf("Deployment image %s while the Ingress is refused, want v2", img)
	}
	if e.get("refused", &networkingv1.Ingress{}) {
		t.Fatalf("an Ingress exists although the API server refused it")
	}
	deg := e.expectCondition("refused", casinov1alpha1.ConditionDegraded, metav1.ConditionTrue, casinov1alpha1.ReasonReconcileError)
	if !strings.Contains(deg.Message, "taken.example.com") {
		t.Errorf("Degraded says %q, want the refused host", deg.Message)
	}
	if evs := e.drainEvents(); !hasEvent(evs, eventReconcileError) {
		t.Errorf("no %s Warning for the refused Ingress: %q", eventReconcileError, evs)
	}
	// A host the cluster accepts: everything settles.
	e.update("refused", func(c *casinov1alpha1.Casino) { c.Spec.Ingress.Host = "free.example.com" })
	e.reconcile("refused")
	var ing networkingv1.Ingress
	if !e.get("refused", &ing) || ing.Spec.Rules[0].Host != "free.example.com" {
		t.Fatalf("the Ingress for an accepted host is missing: %+v", ing.Spec.Rules)
	}
	e.markDeploymentAvailable("refused")
	e.reconcile("refused")
	e.expectCondition("refused", casinov1alpha1.ConditionDegraded, metav1.ConditionFalse, casinov1alpha1.ReasonAsExpected)
	e.expectCondition("refused", casinov1alpha1.ConditionReady, metav1.ConditionTrue, casinov1alpha1.ReasonAvailable)
}

// TestNetworkPolicyGuardsTheTrustedProxies: with an Ingress the server
// believes X-Forwarded-For from every private range, so any pod that could
// reach its app port could name its own address for the per-address
// limits (sign-in, registration), and nothing but the chart's policy said
// who could. Now spec.networkPolicy makes the Casino's own NetworkPolicy
// (<name>-app: the app port from appFrom alone, the metrics port from
// metricsFrom, or from all when it is empty), removed again with it;
// without it, and without FAIRPLAY_TRUSTED_PROXIES in spec.env, a Warning
// Event says the trust is unguarded. A peer that is neither an ipBlock nor
// selectors is refused by the API. Found by a review playing a tenant of
// another namespace.
func TestNetworkPolicyGuardsTheTrustedProxies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("gate", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.Ingress = &casinov1alpha1.IngressSpec{Host: "gate.example.com"}
	})
	e.reconcile("gate")
	warned := func() bool {
		t.Helper()
		return strings.Contains(strings.Join(e.drainEvents(), "\n"), "Warning "+eventProxiesUnguarded)
	}
	if !warned() {
		t.Fatal("an Ingress without spec.networkPolicy: no Warning that X-Forwarded-For is believed unguarded")
	}
	if e.get("gate-app", &networkingv1.NetworkPolicy{}) {
		t.Fatal("a NetworkPolicy without spec.networkPolicy")
	}

	peer := func(ns, app string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": app}},
		}
	}
	controller, prometheus := peer("ingress-nginx", "ingress-nginx"), peer("monitoring", "prometheus")
	e.update("gate", func(c *casinov1alpha1.Casino) {
		c.Spec.NetworkPolicy = &casinov1alpha1.ServerNetworkPolicySpec{AppFrom: []networkingv1.NetworkPolicyPeer{controller}}
	})
	e.reconcile("gate")
	if warned() {
		t.Fatal("a Warning with spec.networkPolicy set")
	}
	policy := func() networkingv1.NetworkPolicy {
		t.Helper()
		var np networkingv1.NetworkPolicy
		if !e.get("gate-app", &np) || !metav1.IsControlledBy(&np, e.casino("gate")) {
			t.Fatal("no NetworkPolicy gate-app of the Casino's")
		}
		if fmt.Sprint(np.Spec.PodSelector.MatchLabels) != fmt.Sprint(selectorLabels(e.casino("gate"))) ||
			len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress || len(np.Spec.Ingress) != 2 {
			t.Fatalf("policy = %+v", np.Spec)
		}
		return np
	}
	rule := func(r networkingv1.NetworkPolicyIngressRule, port string, from ...networkingv1.NetworkPolicyPeer) {
		t.Helper()
		if len(r.Ports) != 1 || r.Ports[0].Port.String() != port || fmt.Sprint(r.From) != fmt.Sprint(from) {
			t.Fatalf("%s rule = %+v, want from %v", port, r, from)
		}
	}
	np := policy()
	rule(np.Spec.Ingress[0], "http", controller)
	rule(np.Spec.Ingress[1], "metrics") // open to all, as without a policy
	e.update("gate", func(c *casinov1alpha1.Casino) {
		c.Spec.NetworkPolicy.MetricsFrom = []networkingv1.NetworkPolicyPeer{prometheus}
	})
	e.reconcile("gate")
	np = policy()
	rule(np.Spec.Ingress[0], "http", controller)
	rule(np.Spec.Ingress[1], "metrics", prometheus)

	// A peer that is neither, or both: refused, nothing changes.
	for _, bad := range []networkingv1.NetworkPolicyPeer{
		{},
		{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: controller.PodSelector},
	} {
		c := e.casino("gate")
		c.Spec.NetworkPolicy.AppFrom = []networkingv1.NetworkPolicyPeer{bad}
		if err := k8sClient.Update(e.ctx, c); err == nil || !strings.Contains(err.Error(), "each appFrom peer has an ipBlock or selectors") {
			t.Fatalf("a Casino with appFrom peer %+v: %v", bad, err)
		}
	}

	// Without it the policy goes, and the Warning comes back; a
	// FAIRPLAY_TRUSTED_PROXIES of the spec's own silences it.
	e.update("gate", func(c *casinov1alpha1.Casino) { c.Spec.NetworkPolicy = nil })
	e.reconcile("gate")
	if e.get("gate-app", &networkingv1.NetworkPolicy{}) {
		t.Fatal("the NetworkPolicy outlived spec.networkPolicy")
	}
	if !warned() {
		t.Fatal("no Warning after spec.networkPolicy was removed")
	}
	e.update("gate", func(c *casinov1alpha1.Casino) {
		c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_TRUSTED_PROXIES", Value: "10.244.0.0/16"}}
	})
	e.reconcile("gate")
	if warned() {
		t.Fatal("a Warning with FAIRPLAY_TRUSTED_PROXIES in spec.env")
	}
}
