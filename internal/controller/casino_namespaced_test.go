package controller

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

func TestParseWatchNamespaces(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"":                    nil,
		"games":               {"games"},
		" games, ops,,games ": {"games", "ops"},
	} {
		if got := ParseWatchNamespaces(in); !slices.Equal(got, want) {
			t.Errorf("ParseWatchNamespaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCacheOptionsWatchNamespaces(t *testing.T) {
	t.Parallel()
	if opts := CacheOptions(); opts.DefaultNamespaces != nil {
		t.Errorf("cluster-wide cache limited to %v", opts.DefaultNamespaces)
	}
	opts := CacheOptions("games", "ops")
	if got := slices.Sorted(maps.Keys(opts.DefaultNamespaces)); !slices.Equal(got, []string{"games", "ops"}) {
		t.Errorf("namespaces = %v", got)
	}
	// Every kind the reconciler owns is cached only where the operator's
	// label is: not a cluster's other Secrets, nor a tenant's Jobs or
	// Deployments, which a cluster-wide operator would otherwise hold in
	// memory until it reached its limit (found by a review).
	for _, opts := range []cache.Options{CacheOptions(), CacheOptions("games")} {
		selectors := map[string]string{}
		for obj, by := range opts.ByObject {
			if by.Label != nil {
				selectors[fmt.Sprintf("%T", obj)] = by.Label.String()
			}
		}
		for _, kind := range []client.Object{&corev1.Secret{}, &appsv1.Deployment{}, &batchv1.Job{}, &batchv1.CronJob{},
			&corev1.Service{}, &corev1.ServiceAccount{}, &networkingv1.Ingress{}, &networkingv1.NetworkPolicy{},
			&policyv1.PodDisruptionBudget{}} {
			if got := selectors[fmt.Sprintf("%T", kind)]; got != labelManagedBy+"="+ManagedByValue {
				t.Errorf("%T selector = %q: the cache must hold only the operator's own objects", kind, got)
			}
		}
	}
}

// TestManagerRunsNamespacedWithChartRole runs the operator as the chart's
// namespaced install (operator.clusterWide=false, the default) does: the
// ServiceAccount, Roles and RoleBindings `helm template` renders are created
// in the test namespace, and the real manager runs as that ServiceAccount
// with the cache of the rendered --watch-namespace flag. Nothing
// cluster-wide is granted, so a list, watch or read outside the namespace
// would stall it. It must reconcile a Casino to a Deployment (reading the
// referenced Secrets by name), recreate a deleted signing-key Secret at once
// (the Secret watch works under the Role), rotate exactly once per
// rotate-keys-at request, and leave a Casino in another namespace alone.
func TestManagerRunsNamespacedWithChartRole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()

	var serviceAccount, watchFlag string
	for _, u := range renderChart(t, e.ns) {
		if _, hook := u.GetAnnotations()["helm.sh/hook"]; hook || u.GetLabels()[labelComponent] == "metrics" {
			// Nor are the secure metrics' token and access reviews.
			// The CRD-upgrade hook (get/patch on the chart's CRD during
			// `helm upgrade`) is not the operator's RBAC.
			continue
		}
		switch u.GetKind() {
		case "ClusterRole", "ClusterRoleBinding":
			t.Fatalf("the namespaced install renders %s %s", u.GetKind(), u.GetName())
		case "ServiceAccount", "Role", "RoleBinding":
			if u.GetNamespace() != e.ns {
				t.Fatalf("%s %s in namespace %q, want %s", u.GetKind(), u.GetName(), u.GetNamespace(), e.ns)
			}
			must(t, k8sClient.Create(e.ctx, u))
			if u.GetKind() == "ServiceAccount" {
				serviceAccount = u.GetName()
			}
		case "Deployment":
			var d appsv1.Deployment
			must(t, runtimeFromUnstructured(u, &d))
			for _, a := range d.Spec.Template.Spec.Containers[0].Args {
				if v, ok := strings.CutPrefix(a, "--watch-namespace="); ok {
					watchFlag = v
				}
			}
		}
	}
	if serviceAccount == "" || watchFlag != e.ns {
		t.Fatalf("rendered service account %q, --watch-namespace=%q; want one, and %s", serviceAccount, watchFlag, e.ns)
	}

	// The API server authenticates this certificate as the ServiceAccount,
	// so the rendered RoleBindings' ServiceAccount subject applies to it.
	user, err := testEnv.AddUser(envtest.User{
		Name:   fmt.Sprintf("system:serviceaccount:%s:%s", e.ns, serviceAccount),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + e.ns},
	}, restConfig)
	must(t, err)

	// A Casino in another namespace: out of the operator's reach.
	other := fmt.Sprintf("t%d-other", nsCounter.Add(1))
	must(t, k8sClient.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}))
	t.Cleanup(func() {
		_ = k8sClient.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
	})
	elsewhere := &casinov1alpha1.Casino{
		ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: other},
		Spec: casinov1alpha1.CasinoSpec{
			Image:    "registry.example/fairplay:v1",
			Database: casinov1alpha1.DatabaseSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "fairplay-db", Key: "uri"}},
			Redis:    casinov1alpha1.RedisSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "fairplay-redis", Key: "url"}},
		},
	}
	must(t, k8sClient.Create(e.ctx, elsewhere))

	mgr, err := ctrl.NewManager(user.Config(), ctrl.Options{
		Scheme:                  testScheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Cache:                   CacheOptions(ParseWatchNamespaces(watchFlag)...),
		LeaderElection:          true,
		LeaderElectionID:        "fairplay-operator.casino.fairplay.dev",
		LeaderElectionNamespace: e.ns,
		// Generous renewals: a loaded CI machine must not lose the lease
		// (the manager would stop and fail the test).
		LeaseDuration: ptr.To(time.Minute),
		RenewDeadline: ptr.To(45 * time.Second),
		// Two tests run a manager at once in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(t, err)
	must(t, (&CasinoReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("fairplay-operator"), Clock: clock.RealClock{},
	}).SetupWithManager(mgr))
	go func() {
		if err := mgr.Start(e.ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	e.newCasino("ns", "registry.example/fairplay:v1")
	jobName := migrationJobName(e.casino("ns"))
	eventually(t, 30*time.Second, "migration job created by the namespaced manager", func() bool {
		return e.get(jobName, &batchv1.Job{})
	})
	e.finishJob(jobName, true)
	eventually(t, 30*time.Second, "deployment created after the job completed", func() bool {
		return e.get("ns", &appsv1.Deployment{})
	})
	eventually(t, 30*time.Second, "status written", func() bool {
		c := e.casino("ns")
		return c.Status.LastMigration != nil && len(c.Status.KeyIDs) == 1
	})

	// Drift: a deleted signing-key Secret comes back through the Secret watch
	// (nothing else would wake the reconciler for hours).
	var keys corev1.Secret
	if !e.get("ns-signing-keys", &keys) {
		t.Fatal("signing-key secret missing")
	}
	must(t, k8sClient.Delete(e.ctx, &keys))
	eventually(t, 30*time.Second, "deleted signing-key secret recreated", func() bool {
		var s corev1.Secret
		return e.get("ns-signing-keys", &s) && s.UID != keys.UID
	})

	// One annotation, one new key. A merge patch, like `kubectl annotate`: the
	// operator may be writing the status at the same moment.
	before := len(e.casino("ns").Status.KeyIDs)
	at := time.Now().UTC().Format(time.RFC3339)
	annotate := client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+casinov1alpha1.AnnotationRotateKeysAt+`":"`+at+`"}}}`))
	must(t, k8sClient.Patch(e.ctx, &casinov1alpha1.Casino{ObjectMeta: metav1.ObjectMeta{Name: "ns", Namespace: e.ns}}, annotate))
	eventually(t, 30*time.Second, "forced rotation", func() bool {
		c := e.casino("ns")
		return c.Annotations[casinov1alpha1.AnnotationRotateKeysAt] == at && len(c.Status.KeyIDs) == before+1 &&
			c.Status.LastForcedRotation != nil && c.Status.LastForcedRotation.UTC().Format(time.RFC3339) == at
	})
	time.Sleep(2 * time.Second) // a second rotation would show by now
	var s corev1.Secret
	if !e.get("ns-signing-keys", &s) || len(s.Data) != before+1 {
		t.Fatalf("signing-key secret holds %d keys after one forced rotation, want %d", len(s.Data), before+1)
	}

	// The Casino in the other namespace was never touched.
	var jobs batchv1.JobList
	must(t, k8sClient.List(e.ctx, &jobs, client.InNamespace(other)))
	var secrets corev1.SecretList
	must(t, k8sClient.List(e.ctx, &secrets, client.InNamespace(other)))
	if len(jobs.Items) != 0 || len(secrets.Items) != 0 {
		t.Fatalf("the namespaced operator acted in namespace %s: %d jobs, %d secrets", other, len(jobs.Items), len(secrets.Items))
	}
	var got casinov1alpha1.Casino
	must(t, k8sClient.Get(e.ctx, client.ObjectKeyFromObject(elsewhere), &got))
	if len(got.Status.Conditions) != 0 {
		t.Fatalf("the namespaced operator wrote the status of %s/%s: %+v", other, got.Name, got.Status.Conditions)
	}
}
