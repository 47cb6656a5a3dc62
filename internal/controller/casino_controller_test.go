package controller

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// TestFirstReconcileCreatesEverything: the first reconcile makes the
// signing-key Secret, the Service, the PDB and the migrations Job, but no
// Deployment until the first migration succeeds; completing the Job creates
// the Deployment with the image, and an available Deployment makes the
// Casino Ready.
func TestFirstReconcileCreatesEverything(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("web", "registry.example/fairplay:v1")

	res := e.reconcile("web")
	if res.RequeueAfter <= 0 || res.RequeueAfter > DefaultRotationInterval {
		t.Fatalf("RequeueAfter = %v, want the time to the next rotation", res.RequeueAfter)
	}

	var secret corev1.Secret
	if !e.get("web-signing-keys", &secret) {
		t.Fatal("signing-key secret not created")
	}
	if len(secret.Data) != 1 {
		t.Fatalf("signing-key secret has %d keys, want 1", len(secret.Data))
	}
	var svc corev1.Service
	if !e.get("web", &svc) {
		t.Fatal("service not created")
	}
	// The app's port for the Ingress, /metrics on its own port for the scraper.
	if ports := svc.Spec.Ports; len(ports) != 2 || ports[0].Name != "http" || ports[0].Port != 80 ||
		ports[1].Name != "metrics" || ports[1].Port != 9090 || ports[1].TargetPort.StrVal != "metrics" {
		t.Fatalf("service ports = %+v", ports)
	}
	var pdb policyv1.PodDisruptionBudget
	if !e.get("web", &pdb) {
		t.Fatal("pdb not created for 2 replicas (the API default)")
	}
	var job batchv1.Job
	jobName := migrationJobName(e.casino("web"))
	if !e.get(jobName, &job) {
		t.Fatalf("migrations job %s not created", jobName)
	}
	if e.get("web", &appsv1.Deployment{}) {
		t.Fatal("deployment created before the first migration succeeded")
	}

	c := e.casino("web")
	if c.Status.ActiveKeyID == "" || c.Status.NextRotation == nil || c.Status.SigningKeysSecret != "web-signing-keys" {
		t.Fatalf("key status not recorded: %+v", c.Status)
	}
	e.expectCondition("web", casinov1alpha1.ConditionMigrationsSucceeded, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationRunning)
	e.expectCondition("web", casinov1alpha1.ConditionProgressing, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationRunning)
	e.expectCondition("web", casinov1alpha1.ConditionReady, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationRunning)
	e.expectCondition("web", casinov1alpha1.ConditionDegraded, metav1.ConditionFalse, casinov1alpha1.ReasonAsExpected)
	evs := e.drainEvents()
	for _, want := range []string{eventSigningKeysCreated, eventMigrationStarted} {
		if !hasEvent(evs, want) {
			t.Errorf("no %s event in %q", want, evs)
		}
	}

	e.finishJob(jobName, true)
	e.reconcile("web")
	d := e.deployment("web")
	if got := serverImage(d); got != "registry.example/fairplay:v1" {
		t.Fatalf("deployment image = %q", got)
	}
	if ports := d.Spec.Template.Spec.Containers[0].Ports; len(ports) != 2 || ports[1].Name != "metrics" || ports[1].ContainerPort != 9090 {
		t.Fatalf("container ports = %+v", ports)
	}
	c = e.casino("web")
	if c.Status.LastMigration == nil || c.Status.LastMigration.Image != "registry.example/fairplay:v1" || c.Status.LastMigration.JobName != jobName {
		t.Fatalf("lastMigration = %+v", c.Status.LastMigration)
	}
	if c.Status.CurrentImage != "registry.example/fairplay:v1" {
		t.Fatalf("currentImage = %q", c.Status.CurrentImage)
	}
	e.expectCondition("web", casinov1alpha1.ConditionMigrationsSucceeded, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationSucceeded)
	e.expectCondition("web", casinov1alpha1.ConditionReady, metav1.ConditionFalse, casinov1alpha1.ReasonRollingOut)
	if evs := e.drainEvents(); !hasEvent(evs, eventMigrationSucceeded) || !hasEvent(evs, eventDeploymentCreated) {
		t.Errorf("events after the migration: %q", evs)
	}

	e.markDeploymentAvailable("web")
	e.reconcile("web")
	e.expectCondition("web", casinov1alpha1.ConditionReady, metav1.ConditionTrue, casinov1alpha1.ReasonAvailable)
	e.expectCondition("web", casinov1alpha1.ConditionProgressing, metav1.ConditionFalse, casinov1alpha1.ReasonRolloutComplete)
	if c := e.casino("web"); c.Status.AvailableReplicas != 2 || c.Status.Replicas != 2 || c.Status.Selector == "" {
		t.Fatalf("replica status = %d/%d selector %q", c.Status.AvailableReplicas, c.Status.Replicas, c.Status.Selector)
	}
	if evs := e.drainEvents(); !hasEvent(evs, eventAvailable) {
		t.Errorf("no Available event in %q", evs)
	}
}

// TestReconcileIsIdempotent: reconciling an unchanged Casino writes
// nothing: no object and not the Casino's status changes resourceVersion.
func TestReconcileIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("idem", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.Ingress = &casinov1alpha1.IngressSpec{Host: "play.example.com", TLSSecretName: "play-tls"}
	})
	e.reconcile("idem")
	e.finishJob(migrationJobName(e.casino("idem")), true)
	e.reconcile("idem")
	e.markDeploymentAvailable("idem")
	e.reconcile("idem")

	versions := func() map[string]string {
		out := map[string]string{}
		for name, obj := range map[string]client.Object{
			"casino":     &casinov1alpha1.Casino{},
			"deployment": &appsv1.Deployment{},
			"service":    &corev1.Service{},
			"ingress":    &networkingv1.Ingress{},
			"pdb":        &policyv1.PodDisruptionBudget{},
		} {
			if !e.get("idem", obj) {
				t.Fatalf("%s missing", name)
			}
			out[name] = obj.GetResourceVersion()
		}
		var s corev1.Secret
		e.get("idem-signing-keys", &s)
		out["secret"] = s.ResourceVersion
		return out
	}
	before := versions()
	e.clock.Step(time.Hour)
	for range 3 {
		e.reconcile("idem")
	}
	after := versions()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s was written by a no-op reconcile (resourceVersion %s -> %s)", k, v, after[k])
		}
	}
}

// TestSpecChangesPropagate: replicas, env, ingress and pod settings reach
// the owned objects; optional objects go away when the spec drops them.
func TestSpecChangesPropagate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("prop", "registry.example/fairplay:v1")
	e.reconcile("prop")
	e.finishJob(migrationJobName(e.casino("prop")), true)
	e.reconcile("prop")

	e.update("prop", func(c *casinov1alpha1.Casino) {
		c.Spec.Replicas = ptr.To[int32](1)
		c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_LOG_LEVEL", Value: "debug"}}
		c.Spec.Ingress = &casinov1alpha1.IngressSpec{Host: "casino.example.com", ClassName: "nginx"}
		c.Spec.NodeSelector = map[string]string{"pool": "web"}
		c.Spec.PodAnnotations = map[string]string{"example.com/team": "games"}
		c.Spec.OTLPEndpoint = "http://otel-collector.observability:4318"
	})
	e.reconcile("prop")

	d := e.deployment("prop")
	if *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %d, want 1", *d.Spec.Replicas)
	}
	env := envMap(d.Spec.Template.Spec.Containers[0].Env)
	if env["FAIRPLAY_LOG_LEVEL"] != "debug" || env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://otel-collector.observability:4318" {
		t.Errorf("env = %v", env)
	}
	if d.Spec.Template.Spec.NodeSelector["pool"] != "web" || d.Spec.Template.Annotations["example.com/team"] != "games" {
		t.Errorf("pod settings not applied: %v %v", d.Spec.Template.Spec.NodeSelector, d.Spec.Template.Annotations)
	}
	if e.get("prop", &policyv1.PodDisruptionBudget{}) {
		t.Error("pdb kept with one replica")
	}
	var ing networkingv1.Ingress
	if !e.get("prop", &ing) || ing.Spec.Rules[0].Host != "casino.example.com" || ptr.Deref(ing.Spec.IngressClassName, "") != "nginx" {
		t.Fatalf("ingress = %+v", ing.Spec)
	}

	e.update("prop", func(c *casinov1alpha1.Casino) {
		c.Spec.Ingress = nil
		c.Spec.Env = nil
	})
	e.reconcile("prop")
	if e.get("prop", &networkingv1.Ingress{}) {
		t.Error("ingress kept after spec.ingress was removed")
	}
	if _, ok := envMap(e.deployment("prop").Spec.Template.Spec.Containers[0].Env)["FAIRPLAY_LOG_LEVEL"]; ok {
		t.Error("removed env var still set: server-side apply should drop fields the operator no longer sets")
	}
}

// TestOwnedObjectsAreGarbageCollected: every object the Casino makes carries
// a controller owner reference with blockOwnerDeletion, which is what the
// garbage collector follows when the Casino is deleted (envtest runs no
// garbage collector, so the references are what this test checks); a
// reconcile of the deleted Casino does nothing.
func TestOwnedObjectsAreGarbageCollected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("gc", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.Ingress = &casinov1alpha1.IngressSpec{Host: "gc.example.com"}
		c.Spec.ServiceMonitor = &casinov1alpha1.ServiceMonitorSpec{Enabled: true}
	})
	e.reconcile("gc")
	jobName := migrationJobName(e.casino("gc"))
	e.finishJob(jobName, true)
	e.reconcile("gc")
	c := e.casino("gc")

	owned := map[string]client.Object{
		"gc":              &appsv1.Deployment{},
		"gc-signing-keys": &corev1.Secret{},
		jobName:           &batchv1.Job{},
	}
	for name, obj := range owned {
		assertControlledBy(t, e, name, obj, c)
	}
	for _, obj := range []client.Object{&corev1.Service{}, &networkingv1.Ingress{}, &policyv1.PodDisruptionBudget{}, serviceMonitorObject()} {
		assertControlledBy(t, e, "gc", obj, c)
	}

	must(t, k8sClient.Delete(e.ctx, c))
	e.reconcile("gc") // the Casino is gone: nothing to do, no error
}

func assertControlledBy(t *testing.T, e *env, name string, obj client.Object, owner *casinov1alpha1.Casino) {
	t.Helper()
	if !e.get(name, obj) {
		t.Fatalf("%T %s does not exist", obj, name)
	}
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.UID != owner.UID || ref.Kind != "Casino" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Fatalf("%T %s owner = %+v, want controller Casino %s with blockOwnerDeletion", obj, name, ref, owner.UID)
	}
}

// TestManagerRunsWithGeneratedRBAC runs the real manager (watches, cache
// restricted to the operator's Secrets, events.k8s.io recorder) as a user
// bound only to config/rbac/role.yaml, the role generated from the
// +kubebuilder:rbac markers, and checks that it reconciles a Casino to a
// migration Job, records Events, and reacts to the Job completing. A missing
// verb makes it fail.
func TestManagerRunsWithGeneratedRBAC(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()

	const userName = "fairplay-operator"
	user, err := testEnv.AddUser(envtest.User{Name: userName}, restConfig)
	must(t, err)
	var role rbacv1.ClusterRole
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	must(t, err)
	must(t, yaml.Unmarshal(raw, &role))
	role.Name = "fairplay-manager-" + e.ns
	must(t, k8sClient.Create(e.ctx, &role))
	must(t, k8sClient.Create(e.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: userName}},
	}))
	t.Cleanup(func() {
		_ = k8sClient.Delete(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}})
		_ = k8sClient.Delete(t.Context(), &role)
	})

	var leRole rbacv1.Role
	raw, err = os.ReadFile(filepath.Join("..", "..", "config", "rbac", "leader_election_role.yaml"))
	must(t, err)
	must(t, yaml.Unmarshal(raw, &leRole))
	leRole.Namespace = e.ns
	must(t, k8sClient.Create(e.ctx, &leRole))
	must(t, k8sClient.Create(e.ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: leRole.Name, Namespace: e.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leRole.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: userName}},
	}))

	// The manager watches only this test's namespace, so that it leaves the
	// Casinos of the tests running beside it alone.
	mgr, err := ctrl.NewManager(user.Config(), ctrl.Options{
		Scheme:                  testScheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Cache:                   CacheOptions(e.ns),
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

	e.newCasino("managed", "registry.example/fairplay:v1")
	jobName := migrationJobName(e.casino("managed"))
	eventually(t, 30*time.Second, "migration job created by the manager", func() bool {
		return e.get(jobName, &batchv1.Job{})
	})
	e.finishJob(jobName, true) // the Job watch wakes the reconciler
	eventually(t, 30*time.Second, "deployment created after the job completed", func() bool {
		return e.get("managed", &appsv1.Deployment{})
	})
	eventually(t, 30*time.Second, "events recorded through events.k8s.io", func() bool {
		var list corev1.EventList
		must(t, k8sClient.List(e.ctx, &list, client.InNamespace(e.ns)))
		return slices.ContainsFunc(list.Items, func(ev corev1.Event) bool {
			return ev.InvolvedObject.Name == "managed" && ev.Reason == eventMigrationSucceeded
		})
	})
	eventually(t, 30*time.Second, "status MigrationsSucceeded", func() bool {
		c := e.casino("managed")
		return c.Status.LastMigration != nil && c.Status.LastMigration.JobName == jobName
	})
	// The cache holds objects without their managedFields (CacheOptions'
	// transforms, trimForCache), which the API server keeps: nothing reads them.
	var stored, cached appsv1.Deployment
	key := types.NamespacedName{Namespace: e.ns, Name: "managed"}
	must(t, k8sClient.Get(e.ctx, key, &stored))
	must(t, mgr.GetClient().Get(e.ctx, key, &cached))
	if len(stored.ManagedFields) == 0 || len(cached.ManagedFields) != 0 {
		t.Errorf("managedFields: %d entries stored, %d cached; want some stored and none cached",
			len(stored.ManagedFields), len(cached.ManagedFields))
	}
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func envMap(env []corev1.EnvVar) map[string]string {
	out := map[string]string{}
	for _, e := range env {
		out[e.Name] = e.Value
	}
	return out
}
