package controller

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// The server's contract (README: configuration, /healthz, /readyz,
// /metrics on its own listener).
const (
	serverContainer = "fairplay"
	serverPort      = 8080
	serverPortName  = "http"
	// metricsPort serves /metrics (FAIRPLAY_METRICS_ADDR) and nothing else;
	// the Service exposes it for the ServiceMonitor, the Ingress never routes it.
	metricsPort     = 9090
	metricsPortName = "metrics"
	// SigningKeysDir is where the signing-key Secret is mounted; the server
	// re-reads it every 10 s, so rotated keys need no restart.
	SigningKeysDir = "/var/run/fairplay/signing-keys"
	// nonRootUID is distroless's "nonroot" user, the image's USER.
	nonRootUID = 65532
	// fairplayBinary is the image's ENTRYPOINT (the Dockerfile's), which
	// every container the operator builds names as its command: a command
	// left unset is a field the operator's server-side apply does not own,
	// so one someone patched into the Deployment or the audit CronJob
	// stayed there (found by a review playing a hostile tenant); set, the
	// next apply puts it back.
	fairplayBinary = "/fairplay"
)

// Graceful drain. On SIGTERM the server turns /readyz false at once, keeps
// serving for FAIRPLAY_DRAIN_DELAY while the endpoint removal reaches every
// kube-proxy and ingress controller, then stops accepting and gives
// in-flight requests up to FAIRPLAY_SHUTDOWN_TIMEOUT. The pod's
// terminationGracePeriodSeconds covers both plus terminationMargin (closing
// the pools, flushing traces), so the kubelet never SIGKILLs a draining
// server.
//
// There is no preStop hook: a preStop `sleep` would only delay SIGTERM by a
// second, redundant drain. The pod is marked terminating, and so dropped
// from the EndpointSlices, when it is deleted, before any hook runs, so the
// server's own delay already covers the propagation; the server's delay also
// turns readiness false (kube-proxy then stops even its fallback to
// terminating-but-serving endpoints) and logs what it does. The sleep
// action needs Kubernetes 1.30 (beta) while the chart supports 1.29, and the
// image has no shell for an exec hook.
const (
	// DefaultDrainDelay is the FAIRPLAY_DRAIN_DELAY the operator passes
	// unless spec.env sets one.
	DefaultDrainDelay = 10 * time.Second
	// DefaultShutdownTimeout is the FAIRPLAY_SHUTDOWN_TIMEOUT the operator
	// passes unless spec.env sets one (the server's own default).
	DefaultShutdownTimeout = 20 * time.Second
	// terminationMargin is the time left after the shutdown timeout.
	terminationMargin = 5 * time.Second
	// readinessPeriodSeconds and readinessFailureThreshold notice a pod
	// that stopped being ready within about 4 s (plus a probe's 2 s
	// timeout), well inside the drain delay.
	readinessPeriodSeconds    = 2
	readinessFailureThreshold = 2
)

// currentDeployment returns the server Deployment, or nil before the first
// migration has succeeded.
func (r *CasinoReconciler) currentDeployment(ctx context.Context, casino *casinov1alpha1.Casino) (*appsv1.Deployment, error) {
	var d appsv1.Deployment
	if err := r.Get(ctx, types.NamespacedName{Namespace: casino.Namespace, Name: casino.Name}, &d); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &d, nil
}

// serverImage is the image of the server container of d ("" for none).
func serverImage(d *appsv1.Deployment) string {
	if d == nil {
		return ""
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == serverContainer {
			return c.Image
		}
	}
	return ""
}

// reconcileDeployment applies the server Deployment. It runs spec.image once
// that image's migrations succeeded; until then it keeps the image it runs
// (every other field still follows the spec), and before the first
// successful migration there is no Deployment at all, since the server
// refuses an unmigrated database.
func (r *CasinoReconciler) reconcileDeployment(ctx context.Context, casino *casinov1alpha1.Casino, current *appsv1.Deployment, mig migrationState) (*appsv1.Deployment, error) {
	image := serverImage(current)
	if mig.phase == migrationSucceeded {
		image = casino.Spec.Image
	}
	if image == "" {
		return current, nil
	}
	desired := desiredDeployment(casino, image)
	if err := r.apply(ctx, casino, desired); err != nil {
		return nil, err
	}
	switch {
	case current == nil:
		r.event(casino, corev1.EventTypeNormal, eventDeploymentCreated, "Deploy", "Created Deployment %s with %s", desired.Name, image)
	case serverImage(current) != image:
		r.event(casino, corev1.EventTypeNormal, eventRollingOut, "Deploy", "Rolling Deployment %s from %s to %s", desired.Name, serverImage(current), image)
	}
	// Read back what the apply produced (status, generation) for the status step.
	var applied appsv1.Deployment
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: desired.Namespace, Name: desired.Name}, &applied); err != nil {
		return nil, fmt.Errorf("read deployment: %w", err)
	}
	return &applied, nil
}

// desiredDeployment is the server Deployment of casino running image.
func desiredDeployment(casino *casinov1alpha1.Casino, image string) *appsv1.Deployment {
	podLabels := map[string]string{}
	maps.Copy(podLabels, casino.Spec.PodLabels)
	maps.Copy(podLabels, labelsFor(casino, componentServer))

	env := serverEnv(casino)
	pod := basePodSpec(casino)
	pod.PriorityClassName = casino.Spec.PriorityClassName
	pod.TopologySpreadConstraints = topologySpread(casino)
	pod.TerminationGracePeriodSeconds = ptr.To(terminationGracePeriodSeconds(env))
	pod.Volumes = append(pod.Volumes, corev1.Volume{
		Name: "signing-keys",
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: signingKeysSecretName(casino),
			// Readable by the pod's fsGroup (the non-root server), nobody else.
			DefaultMode: ptr.To[int32](0o440),
		}},
	})
	pod.Containers = []corev1.Container{{
		Name:            serverContainer,
		Image:           image,
		ImagePullPolicy: casino.Spec.ImagePullPolicy,
		Command:         []string{fairplayBinary},
		Args:            []string{"serve"},
		Ports: []corev1.ContainerPort{
			{Name: serverPortName, ContainerPort: serverPort, Protocol: corev1.ProtocolTCP},
			{Name: metricsPortName, ContainerPort: metricsPort, Protocol: corev1.ProtocolTCP},
		},
		Env:       env,
		Resources: containerResources(casino),
		LivenessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(serverPortName)}},
			PeriodSeconds:    10,
			TimeoutSeconds:   2,
			FailureThreshold: 3,
		},
		// Short, so that a draining pod (or one that lost Postgres) stops
		// being "serving" in its EndpointSlice within seconds.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString(serverPortName)}},
			PeriodSeconds:    readinessPeriodSeconds,
			TimeoutSeconds:   2,
			FailureThreshold: readinessFailureThreshold,
		},
		StartupProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(serverPortName)}},
			PeriodSeconds:    2,
			FailureThreshold: 30,
		},
		SecurityContext: containerSecurityContext(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: "signing-keys", MountPath: SigningKeysDir, ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"},
		},
	}}

	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      casino.Name,
			Namespace: casino.Namespace,
			Labels:    labelsFor(casino, componentServer),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(desiredReplicas(casino)),
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(casino)},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				// One new pod at a time, and an old one goes only once its
				// replacement is ready: capacity never drops during a roll.
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
					MaxSurge:       ptr.To(intstr.FromInt32(1)),
				},
			},
			RevisionHistoryLimit: ptr.To[int32](5),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: casino.Spec.PodAnnotations},
				Spec:       pod,
			},
		},
	}
}

// topologySpread is spec.topologySpreadConstraints, or, when unset, a
// best-effort spread of the server pods across nodes and zones: maxSkew 1
// with ScheduleAnyway, so a node or zone going away takes at most its share
// of replicas, yet a one-node cluster or nodes without zone labels still
// schedule every replica. matchLabelKeys pod-template-hash counts each
// rollout's pods separately, so a roll spreads its new pods too.
func topologySpread(casino *casinov1alpha1.Casino) []corev1.TopologySpreadConstraint {
	if casino.Spec.TopologySpreadConstraints != nil {
		return casino.Spec.TopologySpreadConstraints
	}
	var out []corev1.TopologySpreadConstraint
	for _, key := range []string{corev1.LabelHostname, corev1.LabelTopologyZone} {
		out = append(out, corev1.TopologySpreadConstraint{
			MaxSkew:           1,
			TopologyKey:       key,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: selectorLabels(casino)},
			MatchLabelKeys:    []string{appsv1.DefaultDeploymentUniqueLabelKey},
		})
	}
	return out
}

// basePodSpec holds what the server, migrations and ledger-audit pods
// share: the Casino's own ServiceAccount (without its token), the
// restricted Pod Security Standard (non-root, seccomp RuntimeDefault), the
// scheduling constraints, and a writable /tmp beside the read-only root.
func basePodSpec(casino *casinov1alpha1.Casino) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName:           serviceAccountName(casino),
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		ImagePullSecrets:             casino.Spec.ImagePullSecrets,
		NodeSelector:                 casino.Spec.NodeSelector,
		Affinity:                     casino.Spec.Affinity,
		Tolerations:                  casino.Spec.Tolerations,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](nonRootUID),
			RunAsGroup:     ptr.To[int64](nonRootUID),
			FSGroup:        ptr.To[int64](nonRootUID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes: []corev1.Volume{{
			Name:         "tmp",
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}},
		}},
	}
}

// containerSecurityContext: no privilege escalation, no capabilities, a
// read-only root file system.
func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// IngressTrustedProxies is FAIRPLAY_TRUSTED_PROXIES of a Casino served
// through an Ingress, unless spec.env sets it: the private and shared
// address ranges pod networks are drawn from (RFC 1918, RFC 6598's
// 100.64.0.0/10, IPv6 unique local addresses). Every request reaches the
// server from the Ingress controller's pod, so without it the server saw
// one client address for all players and every per-address limit (sign-in,
// registration, password change, live streams) was spent by all of them
// together; a stranger could lock everyone out of sign-in with 30 requests
// a minute. Trusting these ranges is safe where only the controller can
// reach the app port, which the chart's NetworkPolicy (on by default)
// ensures where the CNI enforces it; spec.env can narrow it to the
// controller's pod CIDR.
const IngressTrustedProxies = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,fc00::/7"

// serverEnv is the server's configuration (README's table) from the spec:
// connection strings and Turnstile keys from Secrets, the listen addresses
// the ports are wired to, the signing-key directory and activation delay,
// the drain timing, the trusted proxies of an Ingress, OpenTelemetry, then
// spec.env, whose entries replace ours (the API rejects the ones other
// objects depend on).
func serverEnv(casino *casinov1alpha1.Casino) []corev1.EnvVar {
	env := []corev1.EnvVar{
		secretEnv("DATABASE_URL", casino.Spec.Database.URLSecretRef.Name, casino.Spec.Database.URLSecretRef.Key),
		secretEnv("REDIS_URL", casino.Spec.Redis.URLSecretRef.Name, casino.Spec.Redis.URLSecretRef.Key),
		{Name: "FAIRPLAY_HTTP_ADDR", Value: fmt.Sprintf(":%d", serverPort)},
		{Name: "FAIRPLAY_METRICS_ADDR", Value: fmt.Sprintf(":%d", metricsPort)},
		{Name: "FAIRPLAY_SIGNING_KEYS_DIR", Value: SigningKeysDir},
		{Name: "FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY", Value: activationDelay(casino).String()},
		{Name: "FAIRPLAY_DRAIN_DELAY", Value: DefaultDrainDelay.String()},
		{Name: "FAIRPLAY_SHUTDOWN_TIMEOUT", Value: DefaultShutdownTimeout.String()},
	}
	if t := casino.Spec.Turnstile; t != nil {
		env = append(env,
			secretEnv("TURNSTILE_SECRET_KEY", t.SecretName, turnstileSecretKey(t)),
			secretEnv("TURNSTILE_SITE_KEY", t.SecretName, turnstileSiteKey(t)))
	}
	if ing := casino.Spec.Ingress; ing != nil {
		env = append(env, corev1.EnvVar{Name: "FAIRPLAY_TRUSTED_PROXIES", Value: IngressTrustedProxies})
		if ing.TLSSecretName != "" {
			env = append(env, corev1.EnvVar{Name: "FAIRPLAY_SECURE_COOKIES", Value: "true"})
		}
	}
	env = append(env, otelEnv(casino)...)
	return mergeEnv(env, casino.Spec.Env)
}

// terminationGracePeriodSeconds is the drain delay plus the shutdown
// timeout the server runs with (env, after spec.env) plus the margin, in
// whole seconds rounded up.
func terminationGracePeriodSeconds(env []corev1.EnvVar) int64 {
	d := envDuration(env, "FAIRPLAY_DRAIN_DELAY", DefaultDrainDelay) +
		envDuration(env, "FAIRPLAY_SHUTDOWN_TIMEOUT", DefaultShutdownTimeout) + terminationMargin
	return int64(math.Ceil(d.Seconds()))
}

// envDuration is the literal duration value of the variable name in env, or
// def when it is absent or not a literal duration. The API admits only
// literal values for the variables the operator computes with, and a value
// that is no duration stops the server at start-up (the roll stalls with the
// old pods serving), so the default is as good as any then.
func envDuration(env []corev1.EnvVar, name string, def time.Duration) time.Duration {
	i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 || env[i].ValueFrom != nil {
		return def
	}
	d, err := time.ParseDuration(env[i].Value)
	if err != nil || d < 0 {
		return def
	}
	return d
}

// migrationEnv is what `fairplay migrate` needs: DATABASE_URL, plus spec.env
// (log settings, for example).
func migrationEnv(casino *casinov1alpha1.Casino) []corev1.EnvVar {
	env := []corev1.EnvVar{
		secretEnv("DATABASE_URL", casino.Spec.Database.URLSecretRef.Name, casino.Spec.Database.URLSecretRef.Key),
	}
	env = append(env, otelEnv(casino)...)
	return mergeEnv(env, casino.Spec.Env)
}

func otelEnv(casino *casinov1alpha1.Casino) []corev1.EnvVar {
	if casino.Spec.OTLPEndpoint == "" {
		return nil
	}
	return []corev1.EnvVar{
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: casino.Spec.OTLPEndpoint},
		{Name: "OTEL_SERVICE_NAME", Value: "fairplay"},
		{Name: "OTEL_RESOURCE_ATTRIBUTES", Value: "service.namespace=" + casino.Namespace + ",service.instance.id=" + casino.Name},
	}
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
	}}}
}

// mergeEnv appends extra to base; an extra entry replaces the base entry of
// the same name in place (Kubernetes rejects duplicate names in an apply).
func mergeEnv(base, extra []corev1.EnvVar) []corev1.EnvVar {
	out := slices.Clone(base)
	for _, e := range extra {
		if i := slices.IndexFunc(out, func(b corev1.EnvVar) bool { return b.Name == e.Name }); i >= 0 {
			out[i] = e
			continue
		}
		out = append(out, e)
	}
	return out
}

func turnstileSecretKey(t *casinov1alpha1.TurnstileSpec) string {
	if t.SecretKeyKey != "" {
		return t.SecretKeyKey
	}
	return "secretKey"
}

func turnstileSiteKey(t *casinov1alpha1.TurnstileSpec) string {
	if t.SiteKeyKey != "" {
		return t.SiteKeyKey
	}
	return "siteKey"
}

// checkSecretRefs reports the first referenced Secret or key that is
// missing ("" when all exist). The Secrets are read straight from the API
// server: the operator caches only its own Secrets.
func (r *CasinoReconciler) checkSecretRefs(ctx context.Context, casino *casinov1alpha1.Casino) (string, error) {
	type ref struct{ field, secret, key string }
	refs := []ref{
		{"spec.database.urlSecretRef", casino.Spec.Database.URLSecretRef.Name, casino.Spec.Database.URLSecretRef.Key},
		{"spec.redis.urlSecretRef", casino.Spec.Redis.URLSecretRef.Name, casino.Spec.Redis.URLSecretRef.Key},
	}
	if t := casino.Spec.Turnstile; t != nil {
		refs = append(refs,
			ref{"spec.turnstile.secretKeyKey", t.SecretName, turnstileSecretKey(t)},
			ref{"spec.turnstile.siteKeyKey", t.SecretName, turnstileSiteKey(t)})
	}
	seen := map[string]*corev1.Secret{}
	for _, rf := range refs {
		secret, ok := seen[rf.secret]
		if !ok {
			secret = &corev1.Secret{}
			err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: casino.Namespace, Name: rf.secret}, secret)
			switch {
			case apierrors.IsNotFound(err):
				secret = nil
			case err != nil:
				return "", fmt.Errorf("get secret %s: %w", rf.secret, err)
			}
			seen[rf.secret] = secret
		}
		if secret == nil {
			return fmt.Sprintf("Secret %s (%s) not found", rf.secret, rf.field), nil
		}
		if _, ok := secret.Data[rf.key]; !ok {
			return fmt.Sprintf("Secret %s has no key %q (%s)", rf.secret, rf.key, rf.field), nil
		}
	}
	return "", nil
}

// defaultResources are a container's resources when spec.resources gives
// none, the chart's casino.resources: a Casino made without the chart would
// otherwise run BestEffort pods (evicted first under memory pressure), and
// under a ResourceQuota its migration Job could not start a pod at all.
var defaultResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
}

// containerResources are the resources of the Casino's containers (server,
// migrations, ledger audit): spec.resources, or defaultResources when it
// sets neither requests nor limits.
func containerResources(casino *casinov1alpha1.Casino) corev1.ResourceRequirements {
	r := casino.Spec.Resources
	if len(r.Requests) == 0 && len(r.Limits) == 0 && len(r.Claims) == 0 {
		return *defaultResources.DeepCopy()
	}
	return r
}
