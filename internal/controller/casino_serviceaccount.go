package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// componentIdentity labels the ServiceAccount of a Casino's pods.
const componentIdentity = "pod-identity"

// serviceAccountName is the ServiceAccount every pod of the Casino runs as
// (server, migrations, ledger audit): named like the Casino.
func serviceAccountName(casino *casinov1alpha1.Casino) string { return casino.Name }

// reconcileServiceAccount applies the Casino's own ServiceAccount. Without
// one the pods ran as the namespace's `default`, sharing its identity with
// every other pod there that names none: a cloud workload-identity binding
// on `default` (GKE's works through the metadata server, without a
// token), a mesh identity (spiffe://…/sa/default), and the imagePullSecrets
// of `default`, which the API server adds to pods that have none of their
// own (found by a security review). It carries no token (neither does the
// pod: automountServiceAccountToken is false on both) and no
// imagePullSecrets: spec.imagePullSecrets stay on the pods. It is applied
// before anything that makes pods, so none waits for it (the API server
// refuses a pod whose ServiceAccount does not exist). A ServiceAccount of
// that name someone else owns is refused (errNotOurs), not taken over, and
// no pod is made until the name is free: it would run as their identity.
func (r *CasinoReconciler) reconcileServiceAccount(ctx context.Context, casino *casinov1alpha1.Casino) error {
	return r.apply(ctx, casino, desiredServiceAccount(casino))
}

// desiredServiceAccount is the ServiceAccount of the Casino's pods.
func desiredServiceAccount(casino *casinov1alpha1.Casino) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{
			Name:      serviceAccountName(casino),
			Namespace: casino.Namespace,
			Labels:    labelsFor(casino, componentIdentity),
		},
		AutomountServiceAccountToken: ptr.To(false),
	}
}
