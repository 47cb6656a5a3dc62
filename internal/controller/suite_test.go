package controller

// The envtest suite: one real kube-apiserver and etcd for the package (see
// hack/envtest.sh), each test in its own namespace. Tests call Reconcile
// directly with a fake clock, so every step is deterministic; one test runs
// the real manager under the generated RBAC.
//
// envtest runs no controllers: no Deployment, Job or garbage-collector
// controller. Tests set Job and Deployment status themselves, and deletion
// is checked through owner references (which is what the garbage collector
// follows in a real cluster).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	k8sClient  client.Client
	testScheme = runtime.NewScheme()
	nsCounter  atomic.Int64
)

// t0 is the fake clock's start: a fixed, whole-second UTC time.
var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	utilruntime.Must(clientgoscheme.AddToScheme(testScheme))
	utilruntime.Must(casinov1alpha1.AddToScheme(testScheme))

	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run KUBEBUILDER_ASSETS=$(hack/envtest.sh) go test ./internal/controller/...")
		return 1
	}
	testEnv = &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join("..", "..", "config", "crd", "bases"),
			filepath.Join("testdata", "servicemonitor-crd.yaml"),
			filepath.Join("testdata", "prometheusrule-crd.yaml"),
		},
		ErrorIfCRDPathMissing: true,
		Scheme:                testScheme,
	}
	var err error
	restConfig, err = testEnv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start envtest:", err)
		return 1
	}
	defer func() {
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop envtest:", err)
		}
	}()
	k8sClient, err = client.New(restConfig, client.Options{Scheme: testScheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	return m.Run()
}

// zapLevel keeps the operator's logs to errors unless TEST_VERBOSE_OPERATOR
// is set.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_VERBOSE_OPERATOR") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// env is one test's world: a namespace, a fake clock, a reconciler whose
// Events land in a fake recorder.
type env struct {
	t        *testing.T
	ctx      context.Context
	ns       string
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
	r        *CasinoReconciler
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	ns := fmt.Sprintf("t%d-%s", nsCounter.Add(1), strings.ToLower(t.Name()))
	ns = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, ns)
	if len(ns) > 63 {
		ns = ns[:63]
	}
	ns = strings.TrimRight(ns, "-")
	must(t, k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	t.Cleanup(func() {
		// envtest has no namespace controller: the namespace stays
		// Terminating, which is fine for a throw-away API server.
		_ = k8sClient.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	e := &env{t: t, ctx: ctx, ns: ns, clock: clocktesting.NewFakeClock(t0), recorder: events.NewFakeRecorder(200)}
	e.r = &CasinoReconciler{Client: k8sClient, APIReader: k8sClient, Scheme: testScheme, Recorder: e.recorder, Clock: e.clock}
	return e
}

// createSecrets makes the database and Redis Secrets a Casino references.
func (e *env) createSecrets() {
	e.t.Helper()
	for name, kv := range map[string][2]string{
		"fairplay-db":    {"uri", "postgres://fairplay:secret@db:5432/fairplay"},
		"fairplay-redis": {"url", "redis://redis:6379/0"},
	} {
		must(e.t, k8sClient.Create(e.ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			StringData: map[string]string{kv[0]: kv[1]},
		}))
	}
}

// newCasino creates a Casino named name with image and the two Secret refs
// (see createSecrets), then applies mutate before creating it.
func (e *env) newCasino(name, image string, mutate ...func(*casinov1alpha1.Casino)) *casinov1alpha1.Casino {
	e.t.Helper()
	c := &casinov1alpha1.Casino{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: casinov1alpha1.CasinoSpec{
			Image:    image,
			Database: casinov1alpha1.DatabaseSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "fairplay-db", Key: "uri"}},
			Redis:    casinov1alpha1.RedisSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "fairplay-redis", Key: "url"}},
		},
	}
	for _, m := range mutate {
		m(c)
	}
	must(e.t, k8sClient.Create(e.ctx, c))
	return c
}

// reconcile runs one Reconcile of the Casino and fails the test on error.
func (e *env) reconcile(name string) reconcile.Result {
	e.t.Helper()
	res, err := e.r.Reconcile(e.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: name}})
	if err != nil {
		e.t.Fatalf("reconcile %s: %v", name, err)
	}
	return res
}

func (e *env) casino(name string) *casinov1alpha1.Casino {
	e.t.Helper()
	var c casinov1alpha1.Casino
	must(e.t, k8sClient.Get(e.ctx, types.NamespacedName{Namespace: e.ns, Name: name}, &c))
	return &c
}

// update re-reads the Casino, applies mutate and writes it back.
func (e *env) update(name string, mutate func(*casinov1alpha1.Casino)) {
	e.t.Helper()
	c := e.casino(name)
	mutate(c)
	must(e.t, k8sClient.Update(e.ctx, c))
}

// get reads an object of the test namespace; it reports whether it exists.
func (e *env) get(name string, obj client.Object) bool {
	e.t.Helper()
	err := k8sClient.Get(e.ctx, types.NamespacedName{Namespace: e.ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	must(e.t, err)
	return true
}

func (e *env) deployment(name string) *appsv1.Deployment {
	e.t.Helper()
	var d appsv1.Deployment
	if !e.get(name, &d) {
		e.t.Fatalf("deployment %s does not exist", name)
	}
	return &d
}

// finishJob marks a Job as the Job controller would: Complete (with
// SuccessCriteriaMet first) or Failed (with FailureTarget first), as the API
// server's Job status validation requires.
func (e *env) finishJob(name string, succeed bool) {
	e.t.Helper()
	var job batchv1.Job
	if !e.get(name, &job) {
		e.t.Fatalf("job %s does not exist", name)
	}
	now := metav1.NewTime(e.clock.Now())
	start := metav1.NewTime(e.clock.Now().Add(-time.Minute))
	job.Status.StartTime = &start
	cond := func(t batchv1.JobConditionType, reason, msg string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastProbeTime: now, LastTransitionTime: now}
	}
	if succeed {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", "Reached expected number of succeeded pods"),
			cond(batchv1.JobComplete, "CompletionsReached", "Reached expected number of succeeded pods"),
		}
	} else {
		job.Status.Failed = migrationBackoffLimit + 1
		job.Status.Conditions = []batchv1.JobCondition{
			cond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"),
			cond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"),
		}
	}
	must(e.t, k8sClient.Status().Update(e.ctx, &job))
}

// markDeploymentAvailable sets the Deployment's status as its controller
// would once every replica of the current template is available.
func (e *env) markDeploymentAvailable(name string) {
	e.t.Helper()
	d := e.deployment(name)
	n := ptr.Deref(d.Spec.Replicas, 1)
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			LastUpdateTime: metav1.NewTime(e.clock.Now()), LastTransitionTime: metav1.NewTime(e.clock.Now()),
		}},
	}
	must(e.t, k8sClient.Status().Update(e.ctx, d))
}

// condition returns the Casino's condition of type t (failing if absent).
func (e *env) condition(name string, t casinov1alpha1.ConditionType) metav1.Condition {
	e.t.Helper()
	c := e.casino(name)
	cond := meta.FindStatusCondition(c.Status.Conditions, string(t))
	if cond == nil {
		e.t.Fatalf("casino %s has no %s condition: %+v", name, t, c.Status.Conditions)
	}
	return *cond
}

func (e *env) expectCondition(name string, t casinov1alpha1.ConditionType, status metav1.ConditionStatus, reason casinov1alpha1.ConditionReason) metav1.Condition {
	e.t.Helper()
	c := e.condition(name, t)
	if c.Status != status || c.Reason != string(reason) {
		e.t.Fatalf("condition %s = %s/%s (%q), want %s/%s", t, c.Status, c.Reason, c.Message, status, reason)
	}
	if gen := e.casino(name).Generation; c.ObservedGeneration != gen {
		e.t.Fatalf("condition %s observedGeneration = %d, want %d", t, c.ObservedGeneration, gen)
	}
	return c
}

// drainEvents returns the Events recorded so far ("Type Reason Note").
func (e *env) drainEvents() []string {
	var out []string
	for {
		select {
		case ev := <-e.recorder.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

func hasEvent(events []string, reason string) bool {
	for _, ev := range events {
		if strings.Contains(ev, " "+reason+" ") {
			return true
		}
	}
	return false
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// kstatusOf is what kstatus (the library behind Helm 4's --wait, Flux's
// health checks and cli-utils; Argo CD follows the same conditions) computes
// for the Casino: Current, InProgress or Failed.
func (e *env) kstatusOf(name string) kstatus.Status {
	e.t.Helper()
	c := e.casino(name)
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	must(e.t, err)
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(casinov1alpha1.GroupVersion.WithKind("Casino"))
	res, err := kstatus.Compute(u)
	must(e.t, err)
	return res.Status
}
