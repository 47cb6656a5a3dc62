package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Casino runs one Fairplay installation: the stateless server Deployment
// behind a Service (and optionally an Ingress and a ServiceMonitor), the
// database migrations Job of each new image, and the rotating access-token
// signing keys. Postgres and Redis are provided by the platform and referenced
// through Secrets.
//
// The name is limited to 40 characters so that every derived name (for
// example <name>-migrate-<hash>, which also becomes a label value) fits.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:path=casinos,singular=casino,categories=fairplay
// +kubebuilder:metadata:annotations="casino.fairplay.dev/crd-revision=2"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Current",type=string,JSONPath=`.status.currentImage`,priority=1
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.status.activeKeyID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="metadata.name must be at most 40 characters"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (it names the Service)"
type Casino struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec CasinoSpec `json:"spec"`
	// +optional
	Status CasinoStatus `json:"status,omitempty"`
}

// CasinoSpec is the desired state of a Casino.
type CasinoSpec struct {
	// Image is the Fairplay server image (it also runs `fairplay migrate`).
	// Changing it runs the migrations of the new image first; the Deployment
	// rolls only once they succeed. Migrations run once per value of this
	// field, so name one build only: a digest (repo@sha256:...) or an
	// immutable tag, never a tag that is pushed again.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	Image string `json:"image"`

	// ImagePullPolicy of the server and migration containers.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// ImagePullSecrets for private registries.
	// +listType=atomic
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// Replicas of the stateless server. A PodDisruptionBudget is kept while
	// there is more than one.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Resources of the server container (and of the migrations and ledger
	// audit Jobs). Unset (neither requests nor limits): 100m CPU and 128Mi
	// requested, a 512Mi memory limit, as the chart's default.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Database points at the Secret key holding DATABASE_URL.
	// +required
	Database DatabaseSpec `json:"database"`

	// Redis points at the Secret key holding REDIS_URL.
	// +required
	Redis RedisSpec `json:"redis"`

	// Turnstile configures Cloudflare Turnstile; without it the server runs its
	// development bot check.
	// +optional
	Turnstile *TurnstileSpec `json:"turnstile,omitempty"`

	// SigningKeys configures the rotation of the access-token signing keys.
	// +kubebuilder:default={}
	// +optional
	SigningKeys SigningKeysSpec `json:"signingKeys,omitempty"`

	// OTLPEndpoint, when set, becomes OTEL_EXPORTER_OTLP_ENDPOINT and the
	// server exports traces there.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	OTLPEndpoint string `json:"otlpEndpoint,omitempty"`

	// Ingress, when set, exposes the Service on a host name.
	// +optional
	Ingress *IngressSpec `json:"ingress,omitempty"`

	// NetworkPolicy, when set, makes the NetworkPolicy <name>-app: the app
	// port only from appFrom, the metrics port only from metricsFrom. With
	// an Ingress the server believes X-Forwarded-For from the private
	// address ranges pod networks use, so any pod that can reach the app
	// port could name its own address for the per-address limits; without
	// this, a Warning Event says so unless spec.env sets
	// FAIRPLAY_TRUSTED_PROXIES. It takes effect where the CNI enforces
	// NetworkPolicy.
	// +optional
	NetworkPolicy *ServerNetworkPolicySpec `json:"networkPolicy,omitempty"`

	// ServiceMonitor, when enabled, makes a prometheus-operator ServiceMonitor
	// that scrapes /metrics on the Service's "metrics" port (9090; the app's
	// port does not serve metrics). It is skipped while the
	// monitoring.coreos.com API is not installed.
	// +optional
	ServiceMonitor *ServiceMonitorSpec `json:"serviceMonitor,omitempty"`

	// LedgerAudit, when set, runs `fairplay ledger verify` (every balance
	// equals the sum of its ledger entries, every bet matches its entries)
	// on a schedule as a CronJob, and reports the last result through the
	// LedgerAudit condition and the operator's metrics, so drift pages
	// someone.
	// +optional
	LedgerAudit *LedgerAuditSpec `json:"ledgerAudit,omitempty"`

	// PodAnnotations are added to the server pods.
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// PodLabels are added to the server pods (the operator's selector labels
	// win on conflict).
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// NodeSelector of the server and migration pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Affinity of the server and migration pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Tolerations of the server and migration pods.
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// TopologySpreadConstraints of the server pods. Unset, the operator
	// spreads them across nodes (kubernetes.io/hostname) and, where nodes are
	// labelled, zones (topology.kubernetes.io/zone), both with maxSkew 1 and
	// ScheduleAnyway (a one-node or unlabelled cluster still schedules every
	// replica) and matchLabelKeys pod-template-hash (each rollout's pods
	// spread by themselves). A list replaces those defaults; an empty list
	// turns spreading off.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PriorityClassName of the server pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// Env is added to the server and migration containers; an entry replaces
	// an operator-provided variable of the same name (for example
	// FAIRPLAY_LOG_LEVEL or FAIRPLAY_TRUSTED_PROXIES). Variables the operator
	// wires to other objects cannot be set here: the listen addresses (the
	// container ports, probes, Service and Ingress use 8080 and 9090), the
	// signing-key directory (the Secret's mount) and the activation delay
	// (spec.signingKeys.activationDelay, which the key retirement follows).
	// FAIRPLAY_DRAIN_DELAY, FAIRPLAY_SHUTDOWN_TIMEOUT and
	// FAIRPLAY_ACCESS_TOKEN_TTL must be literal values (Go durations such as
	// 10s; the server refuses to start with anything else), since the pods'
	// termination grace period and the key retirement are computed from them.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(e, !(e.name in ['FAIRPLAY_HTTP_ADDR', 'FAIRPLAY_METRICS_ADDR', 'FAIRPLAY_SIGNING_KEYS_DIR', 'FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY']))",message="FAIRPLAY_HTTP_ADDR, FAIRPLAY_METRICS_ADDR, FAIRPLAY_SIGNING_KEYS_DIR and FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY are set by the operator (ports 8080 and 9090, the key Secret's mount, spec.signingKeys.activationDelay)"
	// +kubebuilder:validation:XValidation:rule="self.all(e, !(e.name in ['FAIRPLAY_DRAIN_DELAY', 'FAIRPLAY_SHUTDOWN_TIMEOUT', 'FAIRPLAY_ACCESS_TOKEN_TTL']) || (has(e.value) && !has(e.valueFrom)))",message="FAIRPLAY_DRAIN_DELAY, FAIRPLAY_SHUTDOWN_TIMEOUT and FAIRPLAY_ACCESS_TOKEN_TTL must be literal values such as 10s, not valueFrom (the operator derives the termination grace period and the key retirement from them)"
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// SecretKeyRef names one key of a Secret in the Casino's namespace.
type SecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Key within the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Key string `json:"key"`
}

// DatabaseSpec is the Postgres connection.
type DatabaseSpec struct {
	// URLSecretRef is the Secret key holding the Postgres connection string
	// (DATABASE_URL), for example the `uri` key of a CloudNativePG app Secret.
	// +required
	URLSecretRef SecretKeyRef `json:"urlSecretRef"`
}

// RedisSpec is the Redis connection.
type RedisSpec struct {
	// URLSecretRef is the Secret key holding the Redis URL (REDIS_URL).
	// +required
	URLSecretRef SecretKeyRef `json:"urlSecretRef"`
}

// TurnstileSpec names the Secret with the Cloudflare Turnstile keys.
type TurnstileSpec struct {
	// SecretName is the Secret holding both keys.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	SecretName string `json:"secretName"`

	// SecretKeyKey is the key holding TURNSTILE_SECRET_KEY.
	// +kubebuilder:default=secretKey
	// +kubebuilder:validation:MinLength=1
	// +optional
	SecretKeyKey string `json:"secretKeyKey,omitempty"`

	// SiteKeyKey is the key holding TURNSTILE_SITE_KEY.
	// +kubebuilder:default=siteKey
	// +kubebuilder:validation:MinLength=1
	// +optional
	SiteKeyKey string `json:"siteKeyKey,omitempty"`
}

// SigningKeysSpec configures the token-signing key rotation.
type SigningKeysSpec struct {
	// RotationInterval is how often a new signing key is added. A key is
	// removed once its successor is old enough that no access token it
	// signed can still be valid.
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h')",message="rotationInterval must be at least 1h"
	// +optional
	RotationInterval *metav1.Duration `json:"rotationInterval,omitempty"`

	// ActivationDelay is how long after its creation time (its key id) a new
	// key starts signing (FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY of the
	// servers). Until then the previous key signs, and every key verifies as
	// soon as a server has read it: the kubelet takes up to about two minutes
	// to update a mounted Secret, so a key used earlier could reach a replica
	// that cannot verify it yet. The previous key is kept for
	// max(30m, activationDelay + access-token lifetime + 5m) after its
	// successor appears. At least 2m, the kubelet's time to update a mounted
	// Secret (less and a replica would be handed tokens it cannot verify yet
	// after every rotation; 0 would not start the server at all), and at most
	// 10m, the server's limit (it refuses to start with more), which also
	// keeps it well below the rotation interval (at least 1h).
	// +kubebuilder:default="3m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('10m')",message="activationDelay must be at most 10m (the server's limit)"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('2m')",message="activationDelay must be at least 2m (the kubelet takes up to about two minutes to update a mounted Secret on every replica)"
	// +optional
	ActivationDelay *metav1.Duration `json:"activationDelay,omitempty"`
}

// LedgerAuditSpec schedules the ledger audit.
type LedgerAuditSpec struct {
	// Schedule of the audit in cron format (five fields, or a macro such
	// as @hourly), in TimeZone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\S+\s+){4}\S+)$`
	// +required
	Schedule string `json:"schedule"`

	// TimeZone of the schedule (an IANA name such as Europe/Berlin); empty
	// uses the kube-controller-manager's time zone.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// Suspend stops scheduling new audits; the last result stays reported.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// IngressSpec exposes the server through an Ingress.
type IngressSpec struct {
	// Host is the public host name.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Host string `json:"host"`

	// ClassName is the IngressClass; empty uses the cluster default.
	// +optional
	ClassName string `json:"className,omitempty"`

	// TLSSecretName, when set, terminates TLS with this Secret (for example
	// one cert-manager fills) and makes the anti-forgery cookie Secure.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TLSSecretName string `json:"tlsSecretName,omitempty"`

	// Annotations of the Ingress (for example cert-manager's issuer).
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ServerNetworkPolicySpec says who may reach the server pods: the operator
// makes the NetworkPolicy <name>-app of it. NetworkPolicies add up: this
// one only admits, and another policy selecting the same pods (the chart's)
// may admit more.
// +kubebuilder:validation:XValidation:rule="self.appFrom.all(p, has(p.ipBlock) != (has(p.podSelector) || has(p.namespaceSelector)))",message="each appFrom peer has an ipBlock or selectors, not both and not neither"
// +kubebuilder:validation:XValidation:rule="!has(self.metricsFrom) || self.metricsFrom.all(p, has(p.ipBlock) != (has(p.podSelector) || has(p.namespaceSelector)))",message="each metricsFrom peer has an ipBlock or selectors, not both and not neither"
type ServerNetworkPolicySpec struct {
	// AppFrom are the only peers that may reach the app port: the Ingress
	// controller's pods (and a load balancer's addresses, if one bypasses
	// it). They are the peers whose X-Forwarded-For the server believes
	// behind an Ingress.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +required
	AppFrom []networkingv1.NetworkPolicyPeer `json:"appFrom"`

	// MetricsFrom are the only peers that may reach the metrics port
	// (Prometheus); empty leaves it open to every source, as without a
	// policy.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	MetricsFrom []networkingv1.NetworkPolicyPeer `json:"metricsFrom,omitempty"`
}

// ServiceMonitorSpec configures the prometheus-operator ServiceMonitor.
type ServiceMonitorSpec struct {
	// Enabled makes the ServiceMonitor.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Interval between scrapes.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Pattern=`^([0-9]+(ms|s|m|h))+$`
	// +optional
	Interval string `json:"interval,omitempty"`

	// Labels of the ServiceMonitor (to match a Prometheus serviceMonitorSelector).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// CasinoStatus is the observed state of a Casino.
type CasinoStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Progressing, Degraded and MigrationsSucceeded, and
	// kstatus's Reconciling and Stalled (abnormal-true: True only while in
	// progress, or blocked until a person acts).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// CurrentImage is the image the server Deployment runs.
	// +optional
	CurrentImage string `json:"currentImage,omitempty"`

	// Replicas is the number of server pods (for the scale subresource).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// AvailableReplicas is the number of available server pods.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// Selector is the label selector of the server pods (for the scale
	// subresource).
	// +optional
	Selector string `json:"selector,omitempty"`

	// LastMigration is the last migrations Job that succeeded.
	// +optional
	LastMigration *MigrationStatus `json:"lastMigration,omitempty"`

	// SigningKeysSecret is the Secret mounted at FAIRPLAY_SIGNING_KEYS_DIR.
	// +optional
	SigningKeysSecret string `json:"signingKeysSecret,omitempty"`

	// ActiveKeyID is the key the servers sign with now: the newest key whose
	// activation delay has passed (the oldest key when none has yet, as on a
	// new installation). A key added later shows in keyIDs first.
	// +optional
	ActiveKeyID string `json:"activeKeyID,omitempty"`

	// KeyIDs are the signing keys present (oldest first); all of them verify.
	// +listType=atomic
	// +optional
	KeyIDs []string `json:"keyIDs,omitempty"`

	// NextRotation is when the next signing key will be added.
	// +optional
	NextRotation *metav1.Time `json:"nextRotation,omitempty"`

	// LastLedgerAudit is the newest finished ledger audit.
	// +optional
	LastLedgerAudit *LedgerAuditStatus `json:"lastLedgerAudit,omitempty"`

	// LastForcedRotation is the value of the casino.fairplay.dev/rotate-keys-at
	// annotation last honoured: a later time in the annotation adds a key,
	// the same or an earlier one does nothing.
	// +optional
	LastForcedRotation *metav1.Time `json:"lastForcedRotation,omitempty"`
}

// LedgerAuditStatus records a finished ledger audit Job.
type LedgerAuditStatus struct {
	// JobName of the audit Job.
	JobName string `json:"jobName"`
	// Succeeded is true when `fairplay ledger verify` found no drift.
	Succeeded bool `json:"succeeded"`
	// CompletionTime is when the Job finished (succeeded or failed).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// MigrationStatus records a migrations Job that succeeded.
type MigrationStatus struct {
	// Image whose migrations were applied.
	Image string `json:"image"`
	// JobName of the Job that applied them.
	JobName string `json:"jobName"`
	// CompletionTime of the Job.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// +kubebuilder:object:root=true

// CasinoList is a list of Casinos.
type CasinoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Casino `json:"items"`
}
