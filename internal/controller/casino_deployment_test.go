package controller

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
	"github.com/fairplay/fairplay/internal/settings"
)

func fullCasino() *casinov1alpha1.Casino {
	return &casinov1alpha1.Casino{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "games"},
		Spec: casinov1alpha1.CasinoSpec{
			Image:           "registry.example/fairplay:v1",
			ImagePullPolicy: corev1.PullIfNotPresent,
			Replicas:        ptr.To[int32](3),
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
			Database:     casinov1alpha1.DatabaseSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "db", Key: "uri"}},
			Redis:        casinov1alpha1.RedisSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "redis", Key: "url"}},
			Turnstile:    &casinov1alpha1.TurnstileSpec{SecretName: "turnstile"},
			OTLPEndpoint: "http://collector:4318",
			Ingress:      &casinov1alpha1.IngressSpec{Host: "play.example.com", TLSSecretName: "play-tls"},
			PodLabels:    map[string]string{"team": "games", labelInstance: "hijack"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "games"}},
			Env:          []corev1.EnvVar{{Name: "FAIRPLAY_DRAIN_DELAY", Value: "15s"}, {Name: "FAIRPLAY_TRUSTED_PROXIES", Value: "10.0.0.0/8"}},
		},
	}
}

func TestDesiredDeployment(t *testing.T) {
	t.Parallel()
	c := fullCasino()
	d := desiredDeployment(c, "registry.example/fairplay:v0")

	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %d", *d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	ctr := pod.Containers[0]
	if ctr.Image != "registry.example/fairplay:v0" {
		t.Errorf("image = %s: the Deployment must run the image it is given, not spec.image", ctr.Image)
	}
	if !slices.Equal(ctr.Args, []string{"serve"}) {
		t.Errorf("args = %v", ctr.Args)
	}
	// The app on "http", /metrics on its own "metrics" port (the server's
	// FAIRPLAY_METRICS_ADDR), which is what the ServiceMonitor scrapes.
	if len(ctr.Ports) != 2 || ctr.Ports[0].ContainerPort != 8080 || ctr.Ports[0].Name != "http" ||
		ctr.Ports[1].ContainerPort != 9090 || ctr.Ports[1].Name != "metrics" {
		t.Errorf("ports = %+v", ctr.Ports)
	}
	for _, p := range []*corev1.Probe{ctr.LivenessProbe, ctr.ReadinessProbe, ctr.StartupProbe} {
		if p.HTTPGet.Port.StrVal != "http" {
			t.Errorf("probe %s on port %v, want the app's", p.HTTPGet.Path, p.HTTPGet.Port)
		}
	}
	if ctr.LivenessProbe.HTTPGet.Path != "/healthz" || ctr.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %s readiness %s", ctr.LivenessProbe.HTTPGet.Path, ctr.ReadinessProbe.HTTPGet.Path)
	}
	if !ctr.Resources.Limits.Memory().Equal(resource.MustParse("512Mi")) {
		t.Errorf("resources = %+v", ctr.Resources)
	}
	assertRestricted(t, pod, ctr)

	// The signing keys: the Secret mounted read-only where the env points.
	env := map[string]corev1.EnvVar{}
	for _, e := range ctr.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s set twice", e.Name)
		}
		env[e.Name] = e
	}
	if env["FAIRPLAY_SIGNING_KEYS_DIR"].Value != SigningKeysDir {
		t.Errorf("FAIRPLAY_SIGNING_KEYS_DIR = %q", env["FAIRPLAY_SIGNING_KEYS_DIR"].Value)
	}
	mount := slices.IndexFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == SigningKeysDir })
	if mount < 0 || !ctr.VolumeMounts[mount].ReadOnly {
		t.Fatalf("signing keys not mounted read-only at %s: %+v", SigningKeysDir, ctr.VolumeMounts)
	}
	vol := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == ctr.VolumeMounts[mount].Name })
	if vol < 0 || pod.Volumes[vol].Secret == nil || pod.Volumes[vol].Secret.SecretName != "web-signing-keys" {
		t.Fatalf("signing-key volume = %+v", pod.Volumes)
	}

	// Connection strings and Turnstile keys come from the referenced Secrets.
	for name, want := range map[string][2]string{
		"DATABASE_URL":         {"db", "uri"},
		"REDIS_URL":            {"redis", "url"},
		"TURNSTILE_SECRET_KEY": {"turnstile", "secretKey"},
		"TURNSTILE_SITE_KEY":   {"turnstile", "siteKey"},
	} {
		ref := env[name].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != want[0] || ref.SecretKeyRef.Key != want[1] {
			t.Errorf("%s = %+v, want secret %s key %s", name, env[name], want[0], want[1])
		}
	}
	if env["OTEL_EXPORTER_OTLP_ENDPOINT"].Value != "http://collector:4318" {
		t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT = %q", env["OTEL_EXPORTER_OTLP_ENDPOINT"].Value)
	}
	if env["FAIRPLAY_SECURE_COOKIES"].Value != "true" {
		t.Error("TLS ingress should make the cookies Secure")
	}
	// spec.env replaces an operator variable in place and adds new ones.
	if env["FAIRPLAY_DRAIN_DELAY"].Value != "15s" || env["FAIRPLAY_TRUSTED_PROXIES"].Value != "10.0.0.0/8" {
		t.Errorf("spec.env not merged: %v", env)
	}
	if env["FAIRPLAY_HTTP_ADDR"].Value != ":8080" || env["FAIRPLAY_METRICS_ADDR"].Value != ":9090" {
		t.Errorf("FAIRPLAY_HTTP_ADDR = %q, FAIRPLAY_METRICS_ADDR = %q, want :8080 and :9090 (the container ports)",
			env["FAIRPLAY_HTTP_ADDR"].Value, env["FAIRPLAY_METRICS_ADDR"].Value)
	}
	if env["FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY"].Value != "3m0s" {
		t.Errorf("FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY = %q, want the default 3m0s", env["FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY"].Value)
	}

	// Graceful drain: the grace period covers spec.env's drain delay (15s)
	// and the shutdown timeout (20s) plus the margin; a roll adds one pod
	// and removes none before its replacement is ready; a not-ready pod is
	// noticed in seconds, and no preStop hook delays SIGTERM.
	if env["FAIRPLAY_SHUTDOWN_TIMEOUT"].Value != "20s" {
		t.Errorf("FAIRPLAY_SHUTDOWN_TIMEOUT = %q", env["FAIRPLAY_SHUTDOWN_TIMEOUT"].Value)
	}
	if got := ptr.Deref(pod.TerminationGracePeriodSeconds, 0); got != 15+20+5 {
		t.Errorf("terminationGracePeriodSeconds = %d, want 40", got)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if ru == nil || ru.MaxUnavailable.String() != "0" || ru.MaxSurge.String() != "1" {
		t.Errorf("rolling update = %+v, want maxUnavailable 0, maxSurge 1", ru)
	}
	if rp := ctr.ReadinessProbe; rp.PeriodSeconds*rp.FailureThreshold > 5 {
		t.Errorf("readiness probe notices a not-ready pod after %ds, want at most 5s", rp.PeriodSeconds*rp.FailureThreshold)
	}
	if ctr.Lifecycle != nil {
		t.Errorf("lifecycle = %+v: the server drains itself", ctr.Lifecycle)
	}

	// Pod labels: the user's are added, the selector's cannot be overridden.
	labels := d.Spec.Template.Labels
	if labels["team"] != "games" || labels[labelInstance] != "web" {
		t.Errorf("pod labels = %v", labels)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod labels", k, v)
		}
	}
	if len(pod.Tolerations) != 1 {
		t.Errorf("tolerations = %v", pod.Tolerations)
	}
}

// assertRestricted checks the restricted Pod Security Standard settings.
func assertRestricted(t *testing.T, pod corev1.PodSpec, ctr corev1.Container) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil || !ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context = %+v", psc)
	}
	sc := ctr.SecurityContext
	if sc == nil || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context = %+v", sc)
	}
	if ptr.Deref(pod.AutomountServiceAccountToken, true) {
		t.Error("the server needs no service account token")
	}
}

func TestTerminationGracePeriod(t *testing.T) {
	t.Parallel()
	secret := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}
	for _, tt := range []struct {
		name  string
		extra []corev1.EnvVar
		want  int64
	}{
		{"defaults: 10s drain + 20s shutdown + 5s", nil, 35},
		{"longer drain", []corev1.EnvVar{{Name: "FAIRPLAY_DRAIN_DELAY", Value: "30s"}}, 55},
		{"no drain, short shutdown", []corev1.EnvVar{{Name: "FAIRPLAY_DRAIN_DELAY", Value: "0s"}, {Name: "FAIRPLAY_SHUTDOWN_TIMEOUT", Value: "5s"}}, 10},
		{"fractions round up", []corev1.EnvVar{{Name: "FAIRPLAY_DRAIN_DELAY", Value: "2.5s"}}, 28},
		{"not a literal: the defaults", []corev1.EnvVar{{Name: "FAIRPLAY_DRAIN_DELAY", ValueFrom: secret}}, 35},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := fullCasino()
			c.Spec.Env = tt.extra
			d := desiredDeployment(c, c.Spec.Image)
			if got := ptr.Deref(d.Spec.Template.Spec.TerminationGracePeriodSeconds, 0); got != tt.want {
				t.Fatalf("terminationGracePeriodSeconds = %d, want %d", got, tt.want)
			}
		})
	}
}

// A Casino served through an Ingress trusts X-Forwarded-For from the pod
// networks' ranges, so the server sees each player's address rather than the
// Ingress controller's; spec.env narrows it, and without an Ingress nothing
// is trusted.
func TestIngressTrustsThePodNetwork(t *testing.T) {
	t.Parallel()
	envOf := func(c *casinov1alpha1.Casino) map[string]corev1.EnvVar {
		env := map[string]corev1.EnvVar{}
		for _, e := range desiredDeployment(c, "img").Spec.Template.Spec.Containers[0].Env {
			env[e.Name] = e
		}
		return env
	}
	c := fullCasino()
	c.Spec.Env = nil
	if got := envOf(c)["FAIRPLAY_TRUSTED_PROXIES"].Value; got != IngressTrustedProxies {
		t.Errorf("with an Ingress: FAIRPLAY_TRUSTED_PROXIES = %q, want %q", got, IngressTrustedProxies)
	}
	// The server reads it as every server does (settings, then each CIDR
	// parsed as internal/app parses it); a bad one would stop it at start.
	cfg, err := settings.Load(func(name string) (string, bool) {
		if name == "FAIRPLAY_TRUSTED_PROXIES" {
			return IngressTrustedProxies, true
		}
		return "", false
	})
	if err != nil {
		t.Fatalf("settings with the Ingress's trusted proxies: %v", err)
	}
	if len(cfg.TrustedProxies) != 5 {
		t.Errorf("trusted proxies read: %v, want 5", cfg.TrustedProxies)
	}
	for _, p := range cfg.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			t.Errorf("trusted proxy %q: %v", p, err)
		}
	}
	c.Spec.Ingress.TLSSecretName = ""
	if got := envOf(c)["FAIRPLAY_TRUSTED_PROXIES"].Value; got != IngressTrustedProxies {
		t.Errorf("with an Ingress without TLS: FAIRPLAY_TRUSTED_PROXIES = %q", got)
	}
	c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_TRUSTED_PROXIES", Value: "10.244.0.0/16"}}
	if got := envOf(c)["FAIRPLAY_TRUSTED_PROXIES"].Value; got != "10.244.0.0/16" {
		t.Errorf("spec.env's value: %q", got)
	}
	c.Spec.Ingress, c.Spec.Env = nil, nil
	if e, ok := envOf(c)["FAIRPLAY_TRUSTED_PROXIES"]; ok {
		t.Errorf("without an Ingress: %+v, want no trusted proxies", e)
	}
}

func TestMergeEnv(t *testing.T) {
	t.Parallel()
	base := []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}
	got := mergeEnv(base, []corev1.EnvVar{{Name: "B", Value: "x"}, {Name: "C", Value: "3"}})
	want := []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "x"}, {Name: "C", Value: "3"}}
	if !slices.Equal(got, want) {
		t.Fatalf("mergeEnv = %v, want %v", got, want)
	}
	if base[1].Value != "2" {
		t.Fatal("mergeEnv modified its input")
	}
}

// TestDeploymentSurvivesServerDefaults: the applied Deployment, with every
// default the API server adds, is accepted as is; a second apply of the same
// spec leaves it unchanged (the operator owns only the fields it sets).
func TestDeploymentSurvivesServerDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := fullCasino()
	c.Namespace = e.ns
	c.Spec.Ingress = nil
	must(t, k8sClient.Create(e.ctx, c))
	for range 2 {
		must(t, e.r.apply(e.ctx, c, desiredDeployment(c, c.Spec.Image)))
	}
	d := e.deployment("web")
	if d.Generation != 1 {
		t.Fatalf("generation = %d after two identical applies, want 1", d.Generation)
	}
	if d.Spec.Template.Spec.Containers[0].TerminationMessagePath == "" {
		t.Fatal("server defaults missing: the apply went nowhere?")
	}
}

// TestCommandsAreTheOperators: every container the operator builds names
// the image's entrypoint as its command, so server-side apply owns the
// field and the next reconcile takes back a command someone patched into
// the Deployment or the audit CronJob. Unset, it was nobody's field to the
// operator and stayed: a tenant could make every audit run `fairplay
// version` (found by a review playing a hostile tenant).
func TestCommandsAreTheOperators(t *testing.T) {
	t.Parallel()
	e := deployed(t, "cmd")
	e.update("cmd", func(c *casinov1alpha1.Casino) {
		c.Spec.LedgerAudit = &casinov1alpha1.LedgerAuditSpec{Schedule: "17 * * * *"}
	})
	e.reconcile("cmd")
	c := e.casino("cmd")
	if got := desiredMigrationJob(c, migrationJobName(c)).Spec.Template.Spec.Containers[0].Command; !slices.Equal(got, []string{"/fairplay"}) {
		t.Errorf("migrations command = %v, want the image's entrypoint [/fairplay]", got)
	}

	// What `kubectl patch` sends: a strategic merge patch of another field
	// manager, on the operator's container.
	patch := func(obj client.Object, path, container string) {
		t.Helper()
		body := `{"spec":` + path + `{"containers":[{"name":"` + container + `","command":["/operator","--help"]}]}` +
			strings.Repeat("}", strings.Count(path, "{")) + `}`
		must(t, k8sClient.Patch(e.ctx, obj, client.RawPatch(types.StrategicMergePatchType, []byte(body)), client.FieldOwner("kubectl-patch")))
	}
	var cj batchv1.CronJob
	var d appsv1.Deployment
	e.get(ledgerAuditName(c), &cj)
	e.get("cmd", &d)
	patch(&cj, `{"jobTemplate":{"spec":{"template":{"spec":`, "ledger-verify")
	patch(&d, `{"template":{"spec":`, serverContainer)
	if e.get(ledgerAuditName(c), &cj); !slices.Equal(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command, []string{"/operator", "--help"}) {
		t.Fatal("the patch did not take")
	}

	e.reconcile("cmd")
	e.get(ledgerAuditName(c), &cj)
	e.get("cmd", &d)
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command; !slices.Equal(got, []string{"/fairplay"}) {
		t.Errorf("audit CronJob command = %v after a reconcile, want [/fairplay] back", got)
	}
	if got := d.Spec.Template.Spec.Containers[0].Command; !slices.Equal(got, []string{"/fairplay"}) {
		t.Errorf("Deployment command = %v after a reconcile, want [/fairplay] back", got)
	}

	// So are the audit Job's completions: zero made every audit Complete
	// without a pod, and each was then ignored until the stale alert fired.
	must(t, k8sClient.Patch(e.ctx, &cj, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"jobTemplate":{"spec":{"completions":0,"parallelism":0}}}}`)), client.FieldOwner("kubectl-patch")))
	if e.get(ledgerAuditName(c), &cj); ptr.Deref(cj.Spec.JobTemplate.Spec.Completions, 1) != 0 {
		t.Fatal("the completions patch did not take")
	}
	e.reconcile("cmd")
	e.get(ledgerAuditName(c), &cj)
	if got := ptr.Deref(cj.Spec.JobTemplate.Spec.Completions, 0); got != 1 || ptr.Deref(cj.Spec.JobTemplate.Spec.Parallelism, 0) != 1 {
		t.Errorf("audit CronJob completions %d, parallelism %d after a reconcile, want 1 and 1 back", got, ptr.Deref(cj.Spec.JobTemplate.Spec.Parallelism, 0))
	}
}

// TestTopologySpread: unset, the server pods spread across nodes and zones
// without ever blocking scheduling, per rollout revision; a list in the spec
// replaces the defaults, and an empty list turns spreading off.
func TestTopologySpread(t *testing.T) {
	t.Parallel()
	c := fullCasino()
	got := desiredDeployment(c, "img").Spec.Template.Spec.TopologySpreadConstraints
	if len(got) != 2 || got[0].TopologyKey != corev1.LabelHostname || got[1].TopologyKey != corev1.LabelTopologyZone {
		t.Fatalf("default constraints = %+v, want hostname and zone", got)
	}
	sel := selectorLabels(c)
	for _, tsc := range got {
		if tsc.MaxSkew != 1 || tsc.WhenUnsatisfiable != corev1.ScheduleAnyway ||
			!maps.Equal(tsc.LabelSelector.MatchLabels, sel) || !slices.Equal(tsc.MatchLabelKeys, []string{"pod-template-hash"}) {
			t.Errorf("constraint %s = %+v, want maxSkew 1, ScheduleAnyway, the server selector, per revision", tsc.TopologyKey, tsc)
		}
	}
	// The selector must match the pods it spreads, or it spreads nothing.
	podLabels := desiredDeployment(c, "img").Spec.Template.Labels
	for k, v := range sel {
		if podLabels[k] != v {
			t.Fatalf("spread selector %s=%s does not match the pod labels %v", k, v, podLabels)
		}
	}

	own := []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "example.com/rack", WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: sel}}}
	c.Spec.TopologySpreadConstraints = own
	if got := desiredDeployment(c, "img").Spec.Template.Spec.TopologySpreadConstraints; len(got) != 1 || got[0].TopologyKey != "example.com/rack" {
		t.Errorf("spec constraints not used: %+v", got)
	}
	c.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{}
	if got := desiredDeployment(c, "img").Spec.Template.Spec.TopologySpreadConstraints; len(got) != 0 {
		t.Errorf("an empty list did not turn spreading off: %+v", got)
	}
}

// TestCasinoWithoutResourcesIsNotBestEffort: a Casino made without
// spec.resources (not through the chart) gets the chart's default requests
// and memory limit on its server and its migrations Job, which would
// otherwise be BestEffort pods, evicted first, and under a ResourceQuota
// never started. Found by a review of the Kubernetes side.
func TestCasinoWithoutResourcesIsNotBestEffort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("plain", "registry.example/fairplay:v1")
	e.reconcile("plain")
	var job batchv1.Job
	if !e.get(migrationJobName(e.casino("plain")), &job) {
		t.Fatal("no migrations Job")
	}
	e.finishJob(job.Name, true)
	e.reconcile("plain")
	for what, r := range map[string]corev1.ResourceRequirements{
		"migrations Job": job.Spec.Template.Spec.Containers[0].Resources,
		"server":         e.deployment("plain").Spec.Template.Spec.Containers[0].Resources,
	} {
		if !r.Requests.Cpu().Equal(resource.MustParse("100m")) || !r.Requests.Memory().Equal(resource.MustParse("128Mi")) ||
			!r.Limits.Memory().Equal(resource.MustParse("512Mi")) {
			t.Errorf("%s: resources %+v, want the chart's defaults", what, r)
		}
	}
}
