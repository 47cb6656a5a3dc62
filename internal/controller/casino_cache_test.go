package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// bloated is what a tenant can write on an object of their own: the
// operator's label among a thousand others, 200 KiB of annotations, and
// (in a pod template or a Secret) 1 MiB of data: 1.3 MiB in all, under the
// API server's limit of 1.5 MiB.
func bloated(ns, name string) (metav1.ObjectMeta, []corev1.EnvVar) {
	labels := map[string]string{labelManagedBy: ManagedByValue, labelInstance: "mine", labelComponent: componentServer}
	for i := range 1000 {
		labels[fmt.Sprintf("k%04d", i)] = strings.Repeat("v", 63)
	}
	return metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: "u-" + types.UID(name), ResourceVersion: "7", Labels: labels,
		Annotations: map[string]string{"note": strings.Repeat("a", 200<<10)},
		Finalizers:  []string{"example.com/keep"},
	}, []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", 1<<20)}}
}

func bloatedPod(env []corev1.EnvVar) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: serverContainer, Image: "img", Env: env}}}}
}

// bloatedObjects is one bloated object of each kind the operator caches, none
// controlled by a Casino (or by a CronJob of the operator's), keyed by type.
func bloatedObjects(ns string) map[string]client.Object {
	out := map[string]client.Object{}
	add := func(obj client.Object) { out[fmt.Sprintf("%T", obj)] = obj }
	m, env := bloated(ns, "d")
	add(&appsv1.Deployment{ObjectMeta: m, Spec: appsv1.DeploymentSpec{Template: bloatedPod(env)}})
	m, env = bloated(ns, "j")
	add(&batchv1.Job{ObjectMeta: m, Spec: batchv1.JobSpec{Template: bloatedPod(env)}})
	m, env = bloated(ns, "cj")
	add(&batchv1.CronJob{ObjectMeta: m, Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: bloatedPod(env)}}}})
	m, env = bloated(ns, "s")
	add(&corev1.Secret{ObjectMeta: m, Data: map[string][]byte{"big": []byte(env[0].Value)}})
	m, _ = bloated(ns, "svc")
	add(&corev1.Service{ObjectMeta: m, Spec: corev1.ServiceSpec{Selector: m.Labels}})
	m, env = bloated(ns, "sa")
	add(&corev1.ServiceAccount{ObjectMeta: m, Secrets: []corev1.ObjectReference{{Name: "big", FieldPath: env[0].Value}}})
	m, _ = bloated(ns, "ing")
	add(&networkingv1.Ingress{ObjectMeta: m})
	m, _ = bloated(ns, "np")
	add(&networkingv1.NetworkPolicy{ObjectMeta: m, Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: m.Labels}}})
	m, _ = bloated(ns, "pdb")
	add(&policyv1.PodDisruptionBudget{ObjectMeta: m, Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: m.Labels}}})
	return out
}

// assertSmall fails unless obj, as cached, is a few hundred bytes with no
// label but the operator's.
func assertSmall(t *testing.T, what string, obj any) {
	t.Helper()
	raw, err := json.Marshal(obj)
	must(t, err)
	if len(raw) > 1024 {
		t.Errorf("%s: cached as %d bytes, want at most 1 KiB", what, len(raw))
	}
	if o, ok := obj.(client.Object); ok {
		for k := range o.GetLabels() {
			if !slices.Contains(cachedLabels, k) {
				t.Errorf("%s: cached with label %s", what, k)
			}
		}
	}
}

// TestCacheKeepsLittleOfATenantsObjects: the cache's transform of every
// owned kind keeps a few hundred bytes of an object a tenant bloated and
// labelled app.kubernetes.io/managed-by=fairplay-operator, as anyone may.
// The label alone let a tenant fill a cluster-wide operator's memory with
// such objects (found by a review): each was cached whole but its
// managedFields. A Deployment of a Casino not named like it, a Job of
// someone's CronJob and a Secret's metadata stay as small; and the cache
// the manager builds from CacheOptions holds the trimmed copy.
func TestCacheKeepsLittleOfATenantsObjects(t *testing.T) {
	t.Parallel()
	objs := bloatedObjects("games")
	for _, opts := range []cache.Options{CacheOptions(), CacheOptions("games")} {
		for kind, by := range opts.ByObject {
			name := fmt.Sprintf("%T", kind)
			obj, ok := objs[name]
			if !ok {
				t.Fatalf("no bloated %s to try", name)
			}
			if by.Transform == nil {
				t.Errorf("%s: the cache keeps it whole (no transform)", name)
				continue
			}
			got, err := by.Transform(obj.DeepCopyObject())
			must(t, err)
			assertSmall(t, name, got)
		}
	}

	casino := fullCasino()
	casino.UID = "casino-uid"
	m, env := bloated("games", "other-name")
	d := &appsv1.Deployment{ObjectMeta: m, Spec: appsv1.DeploymentSpec{Template: bloatedPod(env)}}
	must(t, controllerutil.SetControllerReference(casino, d, testScheme))
	m, env = bloated("games", "theirs")
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "games", UID: "cj-uid"}}
	j := &batchv1.Job{ObjectMeta: m, Spec: batchv1.JobSpec{Template: bloatedPod(env)}}
	must(t, controllerutil.SetControllerReference(cj, j, testScheme))
	m, _ = bloated("games", "keys")
	for what, obj := range map[string]any{
		"a Deployment of the Casino named otherwise": d,
		"a Job of a CronJob":                         j,
		"a Secret's metadata":                        &metav1.PartialObjectMetadata{ObjectMeta: m},
	} {
		got, err := trimForCache(obj)
		must(t, err)
		assertSmall(t, what, got)
	}

	// Through a real cache: a tenant's bloated, labelled Deployment.
	e := newEnv(t)
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
	m, env = bloated(e.ns, "bloat")
	m.UID, m.ResourceVersion, m.Finalizers = "", "", nil
	big := &appsv1.Deployment{ObjectMeta: m, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bloat"}},
		Template: bloatedPod(env),
	}}
	big.Spec.Template.Labels = map[string]string{"app": "bloat"}
	must(t, k8sClient.Create(e.ctx, big))
	var cached appsv1.Deployment
	for deadline := time.Now().Add(10 * time.Second); c.Get(e.ctx, client.ObjectKeyFromObject(big), &cached) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cache never saw the labelled Deployment")
		}
	}
	assertSmall(t, "the cached Deployment", &cached)
}

// TestCacheKeepsWhatTheReconcilerReads: of the objects a Casino controls the
// cache keeps what the reconciler reads from it: the server Deployment's
// image, replicas, selector and status (the rollout reads the same), a
// Job's terminal condition and times (also of the audit CronJob's Jobs),
// every object's owner, deletion and the labels the Job lists and the audit
// watch select by. A Job's pod template is not kept: runsAsBuilt reads it
// from the API server. Trimming twice changes nothing.
func TestCacheKeepsWhatTheReconcilerReads(t *testing.T) {
	t.Parallel()
	casino := fullCasino()
	casino.UID = "casino-uid"
	casino.Spec.LedgerAudit = &casinov1alpha1.LedgerAuditSpec{Schedule: "17 * * * *"}
	now := metav1.NewTime(t0)
	trim := func(obj client.Object) client.Object {
		t.Helper()
		got, err := trimForCache(obj.DeepCopyObject())
		must(t, err)
		again, err := trimForCache(got.(client.Object).DeepCopyObject())
		must(t, err)
		if !equality.Semantic.DeepEqual(got, again) {
			t.Errorf("%T: trimming a trimmed object changed it", obj)
		}
		out := got.(client.Object)
		if !equality.Semantic.DeepEqual(metav1.GetControllerOf(out), metav1.GetControllerOf(obj)) {
			t.Errorf("%T: controller reference %+v, want %+v", obj, metav1.GetControllerOf(out), metav1.GetControllerOf(obj))
		}
		if out.GetDeletionTimestamp() == nil || out.GetUID() != obj.GetUID() || out.GetName() != obj.GetName() {
			t.Errorf("%T: metadata lost: %+v", obj, out)
		}
		for _, k := range cachedLabels {
			if out.GetLabels()[k] != obj.GetLabels()[k] {
				t.Errorf("%T: label %s = %q, want %q", obj, k, out.GetLabels()[k], obj.GetLabels()[k])
			}
		}
		return out
	}
	own := func(obj client.Object) client.Object {
		must(t, controllerutil.SetControllerReference(casino, obj, testScheme))
		obj.SetUID(types.UID(obj.GetName() + "-uid"))
		obj.SetDeletionTimestamp(&now)
		return obj
	}

	d := own(desiredDeployment(casino, "registry.example/fairplay:v1")).(*appsv1.Deployment)
	d.Generation = 4
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue}}}
	got := trim(d).(*appsv1.Deployment)
	if serverImage(got) != serverImage(d) || *got.Spec.Replicas != *d.Spec.Replicas ||
		!equality.Semantic.DeepEqual(got.Spec.Selector, d.Spec.Selector) || !equality.Semantic.DeepEqual(got.Status, d.Status) ||
		got.Generation != d.Generation {
		t.Errorf("Deployment cached as %+v", got)
	}
	if a, b := deploymentRollout(got, 3), deploymentRollout(d, 3); a != b {
		t.Errorf("rollout of the cached Deployment = %+v, want %+v", a, b)
	}
	if len(got.Spec.Template.Spec.Containers[0].Env) != 0 {
		t.Error("the Deployment's environment is cached")
	}

	finished := func(j *batchv1.Job) *batchv1.Job {
		j.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "CompletionsReached"},
		}}
		return j
	}
	mig := finished(own(desiredMigrationJob(casino, migrationJobName(casino))).(*batchv1.Job))
	cj := own(desiredLedgerAudit(casino, "registry.example/fairplay:v1")).(*batchv1.CronJob)
	audit := finished(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "web-ledger-audit-1", Namespace: casino.Namespace,
		Labels: cj.Spec.JobTemplate.Labels, UID: "audit-uid", DeletionTimestamp: &now}, Spec: cj.Spec.JobTemplate.Spec})
	must(t, controllerutil.SetControllerReference(cj, audit, testScheme))
	for _, j := range []*batchv1.Job{mig, audit} {
		got := trim(j).(*batchv1.Job)
		okGot, condGot := jobFinished(got)
		okWant, condWant := jobFinished(j)
		if okGot != okWant || condGot != condWant || !got.Status.CompletionTime.Equal(j.Status.CompletionTime) {
			t.Errorf("Job %s cached as finished=%v %+v, want %v %+v", j.Name, okGot, condGot, okWant, condWant)
		}
		if len(got.Spec.Template.Spec.Containers) != 0 {
			t.Errorf("Job %s: its pod template is cached", j.Name)
		}
		// Its fingerprint is: the cached Job is judged as the whole one.
		if !runsAsBuilt(got, &j.Spec) || !runsAsBuilt(j, &j.Spec) {
			t.Errorf("Job %s: the cached copy does not run as built (fingerprint %q)", j.Name, jobRunFingerprint(got))
		}
		other := j.DeepCopy()
		other.Spec.Template.Spec.Containers[0].Args = []string{"version"}
		if runsAsBuilt(trim(other).(*batchv1.Job), &j.Spec) {
			t.Errorf("Job %s: a cached copy of a Job that ran `version` runs as built", j.Name)
		}
	}
	if got := trim(audit); !metav1.IsControlledBy(got, cj) ||
		!slices.Equal(ledgerAuditJobToCasino(t.Context(), got), ledgerAuditJobToCasino(t.Context(), audit)) {
		t.Errorf("the cached audit Job lost its CronJob or its Casino: %+v", got)
	}

	for _, obj := range []client.Object{cj, own(desiredService(casino)), own(desiredServiceAccount(casino)), own(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "web-signing-keys", Namespace: casino.Namespace, Labels: labelsFor(casino, componentKeys)}})} {
		trim(obj)
	}
}
