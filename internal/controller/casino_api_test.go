package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// TestCRDDefaults: the generated CRD's defaults reach a minimal Casino.
func TestCRDDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.newCasino("defaults", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.Turnstile = &casinov1alpha1.TurnstileSpec{SecretName: "turnstile"}
		c.Spec.ServiceMonitor = &casinov1alpha1.ServiceMonitorSpec{Enabled: true}
	})
	if c.Spec.Replicas == nil || *c.Spec.Replicas != 2 {
		t.Errorf("replicas default = %v, want 2", c.Spec.Replicas)
	}
	if c.Spec.SigningKeys.RotationInterval == nil || c.Spec.SigningKeys.RotationInterval.Duration != 24*time.Hour {
		t.Errorf("rotationInterval default = %v, want 24h", c.Spec.SigningKeys.RotationInterval)
	}
	if c.Spec.SigningKeys.ActivationDelay == nil || c.Spec.SigningKeys.ActivationDelay.Duration != DefaultActivationDelay {
		t.Errorf("activationDelay default = %v, want %v", c.Spec.SigningKeys.ActivationDelay, DefaultActivationDelay)
	}
	if c.Spec.Turnstile.SecretKeyKey != "secretKey" || c.Spec.Turnstile.SiteKeyKey != "siteKey" {
		t.Errorf("turnstile key defaults = %+v", c.Spec.Turnstile)
	}
	if c.Spec.ServiceMonitor.Interval != "30s" {
		t.Errorf("serviceMonitor interval default = %q", c.Spec.ServiceMonitor.Interval)
	}
}

// TestCRDValidation: the OpenAPI and CEL rules reject what the operator
// could not run.
func TestCRDValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name    string
		casino  string
		mutate  func(*casinov1alpha1.Casino)
		message string
	}{
		{"rotation below an hour", "short", func(c *casinov1alpha1.Casino) {
			c.Spec.SigningKeys.RotationInterval = &metav1.Duration{Duration: 30 * time.Minute}
		}, "rotationInterval must be at least 1h"},
		{"name too long", strings.Repeat("n", 41), nil, "at most 40 characters"},
		{"name not a DNS-1035 label", "1casino", nil, "DNS-1035"},
		{"empty image", "noimage", func(c *casinov1alpha1.Casino) { c.Spec.Image = "" }, "spec.image"},
		{"negative replicas", "negative", func(c *casinov1alpha1.Casino) { r := int32(-1); c.Spec.Replicas = &r }, "spec.replicas"},
		{"bad ingress host", "badhost", func(c *casinov1alpha1.Casino) {
			c.Spec.Ingress = &casinov1alpha1.IngressSpec{Host: "Not A Host"}
		}, "spec.ingress.host"},
		{"otlp endpoint without scheme", "otlp", func(c *casinov1alpha1.Casino) { c.Spec.OTLPEndpoint = "collector:4318" }, "spec.otlpEndpoint"},
		{"missing secret key", "nokey", func(c *casinov1alpha1.Casino) { c.Spec.Database.URLSecretRef.Key = "" }, "spec.database.urlSecretRef.key"},
		{"bad pull policy", "pull", func(c *casinov1alpha1.Casino) { c.Spec.ImagePullPolicy = "Sometimes" }, "spec.imagePullPolicy"},
		{"activation delay above the server's 10m", "slowkey", func(c *casinov1alpha1.Casino) {
			c.Spec.SigningKeys.ActivationDelay = &metav1.Duration{Duration: 11 * time.Minute}
		}, "activationDelay must be at most 10m"},
		{"negative activation delay", "negkey", func(c *casinov1alpha1.Casino) {
			c.Spec.SigningKeys.ActivationDelay = &metav1.Duration{Duration: -time.Minute}
		}, "spec.signingKeys.activationDelay"},
		// 0s passed and the server refused to start; 30s passed and handed
		// replicas tokens they could not verify yet after each rotation.
		{"activation delay of 0s", "zerokey", func(c *casinov1alpha1.Casino) {
			c.Spec.SigningKeys.ActivationDelay = &metav1.Duration{}
		}, "activationDelay must be at least 2m"},
		{"activation delay shorter than a Secret update", "fastkey", func(c *casinov1alpha1.Casino) {
			c.Spec.SigningKeys.ActivationDelay = &metav1.Duration{Duration: 30 * time.Second}
		}, "activationDelay must be at least 2m"},
		// The ports, probes, Service and Ingress are wired to 8080 and 9090.
		{"env moves the metrics listener", "metricsenv", func(c *casinov1alpha1.Casino) {
			c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_METRICS_ADDR", Value: ":8080"}}
		}, "set by the operator"},
		{"env bypasses spec.signingKeys.activationDelay", "delayenv", func(c *casinov1alpha1.Casino) {
			c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY", Value: "0s"}}
		}, "set by the operator"},
		{"drain delay from a Secret", "drainref", func(c *casinov1alpha1.Casino) {
			c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_DRAIN_DELAY", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}}
		}, "must be literal values"},
		{"token lifetime from a ConfigMap", "ttl", func(c *casinov1alpha1.Casino) {
			c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_ACCESS_TOKEN_TTL", ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Key: "k"}}}}
		}, "must be literal values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &casinov1alpha1.Casino{
				ObjectMeta: metav1.ObjectMeta{Name: tt.casino, Namespace: e.ns},
				Spec: casinov1alpha1.CasinoSpec{
					Image:    "registry.example/fairplay:v1",
					Database: casinov1alpha1.DatabaseSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "db", Key: "uri"}},
					Redis:    casinov1alpha1.RedisSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "redis", Key: "url"}},
				},
			}
			if tt.mutate != nil {
				tt.mutate(c)
			}
			err := k8sClient.Create(e.ctx, c, client.FieldValidation("Strict"))
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("create: %v, want Invalid mentioning %q", err, tt.message)
			}
		})
	}
}
