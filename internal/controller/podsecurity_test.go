package controller

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// restrictedNamespace creates a namespace labelled
// pod-security.kubernetes.io/enforce=restricted, as the real-node suite
// installs into.
func restrictedNamespace(t *testing.T, e *env) string {
	t.Helper()
	ns := fmt.Sprintf("t%d-restricted", nsCounter.Add(1))
	must(t, k8sClient.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}))
	t.Cleanup(func() {
		_ = k8sClient.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	return ns
}

// admitRestricted has the API server's Pod Security admission judge a pod
// with spec in a restricted namespace (a dry-run create: admission runs,
// nothing is stored). Admission enforces on Pods only, not on the
// Deployments and Jobs that make them, hence the pod.
func admitRestricted(e *env, ns, name string, spec corev1.PodSpec) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec}
	return k8sClient.Create(e.ctx, pod, client.DryRunAll)
}

// assertReadOnlyRoot checks what the restricted profile does not demand but
// the image is built for: every container's root file system is read-only.
func assertReadOnlyRoot(t *testing.T, what string, spec corev1.PodSpec) {
	t.Helper()
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		if c.SecurityContext == nil || !ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false) {
			t.Errorf("%s: container %s has a writable root file system", what, c.Name)
		}
	}
}

// TestPodsMeetRestrictedPodSecurity: the pods of the server Deployment and
// the migrations Job the operator builds, and of the chart's operator
// Deployment (both install modes, default and full values), are admitted
// by Pod Security admission enforcing the restricted profile, and run with
// a read-only root file system. A pod that drops one setting is refused,
// which shows the enforcement is real.
func TestPodsMeetRestrictedPodSecurity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := restrictedNamespace(t, e)

	c := fullCasino()
	c.Namespace = ns
	pods := map[string]corev1.PodSpec{
		"server":     desiredDeployment(c, c.Spec.Image).Spec.Template.Spec,
		"migrations": desiredMigrationJob(c, migrationJobName(c)).Spec.Template.Spec,
	}
	for name, args := range map[string][]string{
		"operator-namespaced":   nil,
		"operator-cluster-wide": {"--set", "operator.clusterWide=true"},
		"operator-full-values":  {"-f", chartDir + "/ci/full-values.yaml"},
	} {
		spec := renderedDeployment(t, ns, args...).Spec.Template.Spec
		spec.PriorityClassName = "" // full values name a class envtest does not have
		pods[name] = spec
	}
	for name, spec := range pods {
		if err := admitRestricted(e, ns, name, spec); err != nil {
			t.Errorf("%s pod refused under the restricted profile: %v", name, err)
		}
		assertReadOnlyRoot(t, name, spec)
	}

	server := pods["server"]
	weakened := *server.DeepCopy()
	weakened.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	err := admitRestricted(e, ns, "weakened", weakened)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "allowPrivilegeEscalation") {
		t.Fatalf("a pod without allowPrivilegeEscalation=false: %v, want Forbidden by PodSecurity", err)
	}
}
