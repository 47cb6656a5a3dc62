package controller

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// recordWrites has the reconciler write through a client that records the
// kind of each object it creates or applies, in order.
func recordWrites(t *testing.T, e *env) func() []string {
	t.Helper()
	base, err := client.NewWithWatch(restConfig, client.Options{Scheme: testScheme})
	must(t, err)
	var mu sync.Mutex
	var kinds []string
	record := func(kind string) {
		mu.Lock()
		defer mu.Unlock()
		kinds = append(kinds, kind)
	}
	e.r.Client = interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			gvk, err := c.GroupVersionKindFor(obj)
			if err != nil {
				return err
			}
			record(gvk.Kind)
			return c.Create(ctx, obj, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if k, ok := obj.(interface{ GetKind() string }); ok {
				record(k.GetKind())
			}
			return c.Apply(ctx, obj, opts...)
		},
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(kinds)
	}
}

// TestCasinoPodsHaveTheirOwnServiceAccount: every pod the operator builds
// (the server Deployment's, the migration Job's, the audit CronJob's) runs
// as a ServiceAccount of the Casino's own, named like it, without a token,
// and keeps spec.imagePullSecrets on the pod. They ran as the namespace's
// `default` and shared its identity with the namespace's other pods: a cloud
// workload-identity binding on `default`, its mesh identity and its
// imagePullSecrets (found by a security review). The ServiceAccount carries
// the operator's labels and a controller reference to the Casino, is applied
// before any object that makes pods (the API server refuses a pod whose
// ServiceAccount does not exist), is made again when deleted and put back
// when edited; an annotation someone adds (a workload-identity binding for
// the Casino) stays.
func TestCasinoPodsHaveTheirOwnServiceAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	writes := recordWrites(t, e)
	pull := []corev1.LocalObjectReference{{Name: "registry-creds"}}
	e.newCasino("own", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.ImagePullSecrets = pull
		c.Spec.LedgerAudit = &casinov1alpha1.LedgerAuditSpec{Schedule: "17 * * * *"}
	})
	e.reconcile("own")
	e.finishJob(migrationJobName(e.casino("own")), true)
	e.reconcile("own")

	var sa corev1.ServiceAccount
	if !e.get("own", &sa) {
		t.Fatal("no ServiceAccount own")
	}
	if ptr.Deref(sa.AutomountServiceAccountToken, true) || !metav1.IsControlledBy(&sa, e.casino("own")) ||
		sa.Labels[labelManagedBy] != ManagedByValue || sa.Labels[casinov1alpha1.LabelCasino] != "own" ||
		len(sa.ImagePullSecrets) != 0 || len(sa.Secrets) != 0 {
		t.Fatalf("ServiceAccount own: automount %v, owners %+v, labels %v, imagePullSecrets %v, secrets %v",
			sa.AutomountServiceAccountToken, sa.OwnerReferences, sa.Labels, sa.ImagePullSecrets, sa.Secrets)
	}

	var job batchv1.Job
	if !e.get(migrationJobName(e.casino("own")), &job) {
		t.Fatal("no migration Job")
	}
	var cj batchv1.CronJob
	if !e.get(ledgerAuditName(e.casino("own")), &cj) {
		t.Fatal("no ledger audit CronJob")
	}
	for what, pod := range map[string]corev1.PodSpec{
		"Deployment":    e.deployment("own").Spec.Template.Spec,
		"migration Job": job.Spec.Template.Spec,
		"audit CronJob": cj.Spec.JobTemplate.Spec.Template.Spec,
	} {
		if pod.ServiceAccountName != "own" || ptr.Deref(pod.AutomountServiceAccountToken, true) ||
			!equality.Semantic.DeepEqual(pod.ImagePullSecrets, pull) {
			t.Errorf("%s pods: serviceAccountName %q, automountServiceAccountToken %v, imagePullSecrets %v; want own, false, %v",
				what, pod.ServiceAccountName, ptr.Deref(pod.AutomountServiceAccountToken, true), pod.ImagePullSecrets, pull)
		}
	}
	got := writes()
	first := slices.Index(got, "ServiceAccount")
	for _, kind := range []string{"Job", "Deployment", "CronJob"} {
		if i := slices.Index(got, kind); first < 0 || i < 0 || i < first {
			t.Errorf("writes %v: the %s before the ServiceAccount", got, kind)
		}
	}

	// Edited: put back; an annotation of someone else's stays.
	patch := client.RawPatch(types.MergePatchType, []byte(
		`{"metadata":{"annotations":{"iam.gke.io/gcp-service-account":"casino@example.iam.gserviceaccount.com"}},"automountServiceAccountToken":true}`))
	must(t, k8sClient.Patch(e.ctx, &sa, patch))
	e.reconcile("own")
	if !e.get("own", &sa) || ptr.Deref(sa.AutomountServiceAccountToken, true) ||
		sa.Annotations["iam.gke.io/gcp-service-account"] != "casino@example.iam.gserviceaccount.com" {
		t.Fatalf("edited ServiceAccount after a reconcile: automount %v, annotations %v", sa.AutomountServiceAccountToken, sa.Annotations)
	}
	// Deleted: made again.
	must(t, k8sClient.Delete(e.ctx, &sa))
	e.reconcile("own")
	var again corev1.ServiceAccount
	if !e.get("own", &again) || again.UID == sa.UID || !metav1.IsControlledBy(&again, e.casino("own")) {
		t.Fatal("a deleted ServiceAccount was not made again")
	}
}

// TestCasinoLeavesOthersServiceAccountAlone: a ServiceAccount named like the
// Casino that someone else owns is not taken over (its pods would run as
// their identity, and it would be deleted with the Casino): the Casino
// reports the clash (Degraded) and makes no pod-making object until the name
// is free, then goes on as usual.
func TestCasinoLeavesOthersServiceAccountAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	theirs := &corev1.ServiceAccount{
		ObjectMeta:       metav1.ObjectMeta{Name: "shop", Namespace: e.ns, Labels: map[string]string{"team": "a"}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "team-a-registry"}},
	}
	must(t, k8sClient.Create(e.ctx, theirs))
	e.newCasino("shop", "registry.example/fairplay:v1")

	_, err := e.r.Reconcile(e.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "shop"}})
	want := "ServiceAccount shop exists and does not belong to this Casino"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("reconcile: %v, want %q", err, want)
	}
	cond := e.expectCondition("shop", casinov1alpha1.ConditionDegraded, metav1.ConditionTrue, casinov1alpha1.ReasonReconcileError)
	if !strings.Contains(cond.Message, want) {
		t.Fatalf("Degraded message %q does not name the ServiceAccount", cond.Message)
	}
	var got corev1.ServiceAccount
	if !e.get("shop", &got) || len(got.OwnerReferences) != 0 || !equality.Semantic.DeepEqual(got.Labels, theirs.Labels) ||
		got.AutomountServiceAccountToken != nil || !equality.Semantic.DeepEqual(got.ImagePullSecrets, theirs.ImagePullSecrets) {
		t.Fatalf("the other team's ServiceAccount was changed: labels %v owners %v automount %v imagePullSecrets %v",
			got.Labels, got.OwnerReferences, got.AutomountServiceAccountToken, got.ImagePullSecrets)
	}
	if e.get(migrationJobName(e.casino("shop")), &batchv1.Job{}) {
		t.Fatal("a migration Job was made to run as the other team's ServiceAccount")
	}

	// Once the name is free the Casino goes on as usual.
	must(t, k8sClient.Delete(e.ctx, &got))
	e.reconcile("shop")
	var own corev1.ServiceAccount
	if !e.get("shop", &own) || !metav1.IsControlledBy(&own, e.casino("shop")) {
		t.Fatal("the Casino did not make its ServiceAccount once the name was free")
	}
	var job batchv1.Job
	if !e.get(migrationJobName(e.casino("shop")), &job) || job.Spec.Template.Spec.ServiceAccountName != "shop" {
		t.Fatal("no migration Job running as the Casino's ServiceAccount once the name was free")
	}
}
