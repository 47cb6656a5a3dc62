package main

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fairplay/fairplay/test/proc"
)

// freeAddr is a loopback address nothing listens on, on a port no outgoing
// connection (to the test's API server, say) can take meanwhile (see
// proc.FreePort).
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// token is a bound token of the ServiceAccount default/name.
func token(t *testing.T, cs *kubernetes.Clientset, name string) string {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func ptrTo[T any](v T) *T { return &v }

// TestSecureMetrics runs the manager with the operator's metrics options
// against a real API server: /metrics answers HTTPS only, 401 without a
// token, 403 for a ServiceAccount without the metrics-reader rule, and the
// metrics for one that has it.
func TestSecureMetrics(t *testing.T) {
	cfg := startEnvtest(t)
	addr := freeAddr(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Metrics: metricsOptions(addr, true), HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: "fairplay_operator_test_probe", Help: "set by TestSecureMetrics"})
	metrics.Registry.MustRegister(probe)
	t.Cleanup(func() { metrics.Registry.Unregister(probe) })
	probe.Set(42)
	go func() { _ = mgr.Start(t.Context()) }()

	cs := kubernetes.NewForConfigOrDie(cfg)
	reader, stranger := token(t, cs, "reader"), token(t, cs, "stranger")
	ctx := t.Context()
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: "default"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The certificate is self-signed by design; what is under test is the
	// token check behind it.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	get := func(scheme, tok string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	var code int
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, err = get("https", reader)
		if err == nil && code == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusOK || !strings.Contains(body, "fairplay_operator_test_probe 42") {
		t.Fatalf("reader: %d %v %.300s", code, err, body)
	}
	for _, tc := range []struct {
		name, tok string
		want      int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a token without metrics-reader", stranger, http.StatusForbidden},
		// controller-runtime's filter answers 500 "Authentication failed"
		// for a token the TokenReview cannot parse; what matters is that
		// nothing is served.
		{"a forged token", "not-a-token", http.StatusInternalServerError},
	} {
		code, body, err := get("https", tc.tok)
		if err != nil || code != tc.want || strings.Contains(body, "fairplay_operator_test_probe") {
			t.Errorf("%s: %d %v %.200s, want %d and no metrics", tc.name, code, err, body, tc.want)
		}
	}
	if code, _, err := get("http", reader); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP served the metrics (%d)", code)
	}
}
