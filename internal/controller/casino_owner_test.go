package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// TestCasinoLeavesOthersObjectsAlone: a Casino never takes over an object
// of a name it needs that it does not own. Applying with forced ownership
// made someone else's Service (its selector then pointing at the Casino's
// pods), Ingress or signing-keys Secret (its contents replaced by one key)
// the Casino's, to be deleted with it: anyone allowed to create a Casino in a
// namespace could take over another team's objects there. Found by a review
// playing a hostile tenant. The Casino reports the clash (Degraded, a
// Warning) and touches nothing; once the object is gone it goes on. (A
// signing-keys Secret holding only keys, restored from a backup, is adopted:
// the cluster test's README install does that.)
func TestCasinoLeavesOthersObjectsAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	// Another team's objects, named as a Casino "shop" names its own.
	keys := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-signing-keys", Namespace: e.ns},
		StringData: map[string]string{"api-token": "team-a"},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: e.ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "team-a"},
			Ports: []corev1.ServicePort{{Name: "web", Port: 8080}}},
	}
	must(t, k8sClient.Create(e.ctx, keys))
	must(t, k8sClient.Create(e.ctx, svc))
	e.newCasino("shop", "registry.example/fairplay:v1")

	refused := func(kind, name string) {
		t.Helper()
		_, err := e.r.Reconcile(e.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "shop"}})
		want := kind + " " + name + " exists and does not belong to this Casino"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("reconcile: %v, want %q", err, want)
		}
		cond := e.expectCondition("shop", casinov1alpha1.ConditionDegraded, metav1.ConditionTrue, casinov1alpha1.ReasonReconcileError)
		if !strings.Contains(cond.Message, want) {
			t.Fatalf("Degraded message %q does not name the %s", cond.Message, kind)
		}
	}

	refused("Secret", "shop-signing-keys")
	var gotKeys corev1.Secret
	if !e.get("shop-signing-keys", &gotKeys) || string(gotKeys.Data["api-token"]) != "team-a" || len(gotKeys.Data) != 1 ||
		len(gotKeys.OwnerReferences) != 0 {
		t.Fatalf("the other team's Secret was changed: data keys %d, owners %v", len(gotKeys.Data), gotKeys.OwnerReferences)
	}

	// With the Secret moved away, the Casino makes its own and stops at the
	// Service.
	must(t, k8sClient.Delete(e.ctx, &gotKeys))
	refused("Service", "shop")
	var gotSvc corev1.Service
	if !e.get("shop", &gotSvc) || gotSvc.Spec.Selector["app"] != "team-a" || len(gotSvc.Spec.Selector) != 1 ||
		len(gotSvc.Spec.Ports) != 1 || gotSvc.Spec.Ports[0].Port != 8080 || len(gotSvc.OwnerReferences) != 0 {
		t.Fatalf("the other team's Service was changed: selector %v ports %v owners %v", gotSvc.Spec.Selector,
			gotSvc.Spec.Ports, gotSvc.OwnerReferences)
	}
	var ownKeys corev1.Secret
	if !e.get("shop-signing-keys", &ownKeys) || !metav1.IsControlledBy(&ownKeys, e.casino("shop")) {
		t.Fatal("the Casino did not make its own signing keys once the name was free")
	}

	// Once the name is free the Casino goes on as usual.
	must(t, k8sClient.Delete(e.ctx, &gotSvc))
	e.reconcile("shop")
	var own corev1.Service
	if !e.get("shop", &own) || !metav1.IsControlledBy(&own, e.casino("shop")) {
		t.Fatal("the Casino did not make its Service once the name was free")
	}
}

// TestCasinoLeavesOthersMigrationJobAlone: the operator caches only the
// objects carrying its managed-by label (CacheOptions), so a Job someone
// else made under the name of a Casino's migration Job is not in its cache.
// Creating its own then finds the name taken: the Casino reports the clash
// (Degraded) from the Job the API server holds, rolls nothing out, and
// leaves the Job as it was, as it did when it could see it in the cache.
func TestCasinoLeavesOthersMigrationJobAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	// The reconciler reads through a cache as the manager's (CacheOptions),
	// writes and reads uncached objects through the API server.
	c, err := cache.New(restConfig, func() cache.Options {
		o := CacheOptions(e.ns)
		o.Scheme = testScheme
		return o
	}())
	must(t, err)
	go func() { _ = c.Start(e.ctx) }()
	if !c.WaitForCacheSync(e.ctx) {
		t.Fatal("cache did not sync")
	}
	cached, err := client.New(restConfig, client.Options{Scheme: testScheme, Cache: &client.CacheOptions{Reader: c}})
	must(t, err)
	e.r.Client = cached
	name := migrationJobName(e.newCasino("till", "registry.example/fairplay:v1"))
	job := func(name string, labels map[string]string) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "work", Image: "registry.example/team-a:v1"}},
			}}},
		}
	}
	must(t, k8sClient.Create(e.ctx, job(name, map[string]string{"team": "a"})))
	// A labelled Job made after theirs: once the cache holds it, it has
	// seen every Job event before it, theirs too had it matched.
	sentinel := job("sentinel", map[string]string{labelManagedBy: ManagedByValue})
	must(t, k8sClient.Create(e.ctx, sentinel))
	for deadline := time.Now().Add(10 * time.Second); cached.Get(e.ctx, client.ObjectKeyFromObject(sentinel), &batchv1.Job{}) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cache never saw a labelled Job")
		}
	}
	if err := cached.Get(e.ctx, types.NamespacedName{Namespace: e.ns, Name: name}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Fatalf("another team's Job in the operator's cache: %v", err)
	}
	_, err = e.r.Reconcile(e.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "till"}})
	want := "job " + name + " exists and does not belong to this Casino"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("reconcile: %v, want %q", err, want)
	}
	e.expectCondition("till", casinov1alpha1.ConditionDegraded, metav1.ConditionTrue, casinov1alpha1.ReasonReconcileError)
	var got batchv1.Job
	if !e.get(name, &got) || got.Labels["team"] != "a" || len(got.OwnerReferences) != 0 ||
		got.Spec.Template.Spec.Containers[0].Image != "registry.example/team-a:v1" {
		t.Fatalf("the other team's Job was changed: labels %v owners %v", got.Labels, got.OwnerReferences)
	}
	var d appsv1.Deployment
	if e.get("till", &d) {
		t.Fatal("a Deployment was made without the Casino's migrations")
	}
}
