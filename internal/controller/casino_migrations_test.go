package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

func TestMigrationJobName(t *testing.T) {
	t.Parallel()
	c := &casinov1alpha1.Casino{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 40)}}
	c.Spec.Image = "registry.example/fairplay:v1"
	v1 := migrationJobName(c)
	if v1 != migrationJobName(c) {
		t.Fatal("job name is not stable")
	}
	c.Spec.Image = "registry.example/fairplay:v2"
	if v2 := migrationJobName(c); v2 == v1 {
		t.Fatal("two images share a job name")
	}
	// The longest Casino name still gives a valid label value (pods carry
	// job-name=<job>).
	if errs := validation.IsDNS1123Label(v1); len(errs) > 0 {
		t.Fatalf("job name %q: %v", v1, errs)
	}
}

func TestDesiredMigrationJob(t *testing.T) {
	t.Parallel()
	c := &casinov1alpha1.Casino{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "games"}}
	c.Spec.Image = "registry.example/fairplay:v2"
	c.Spec.Database.URLSecretRef = casinov1alpha1.SecretKeyRef{Name: "db", Key: "uri"}
	c.Spec.Env = []corev1.EnvVar{{Name: "FAIRPLAY_LOG_LEVEL", Value: "debug"}}
	job := desiredMigrationJob(c, migrationJobName(c))

	pod := job.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %s", pod.RestartPolicy)
	}
	ctr := pod.Containers[0]
	if ctr.Image != c.Spec.Image || len(ctr.Args) != 1 || ctr.Args[0] != "migrate" {
		t.Errorf("container runs %s %v, want %s [migrate]", ctr.Image, ctr.Args, c.Spec.Image)
	}
	names := map[string]bool{}
	for _, e := range ctr.Env {
		names[e.Name] = true
	}
	if !names["DATABASE_URL"] || !names["FAIRPLAY_LOG_LEVEL"] || names["FAIRPLAY_SIGNING_KEYS_DIR"] {
		t.Errorf("migration env = %v: want DATABASE_URL and spec.env, not the server's key directory", names)
	}
	if job.Annotations[casinov1alpha1.AnnotationImage] != c.Spec.Image {
		t.Errorf("image annotation = %q", job.Annotations[casinov1alpha1.AnnotationImage])
	}
	if *job.Spec.BackoffLimit != migrationBackoffLimit || job.Spec.ActiveDeadlineSeconds == nil {
		t.Errorf("job limits: backoff %d deadline %v", *job.Spec.BackoffLimit, job.Spec.ActiveDeadlineSeconds)
	}
	assertRestricted(t, pod, ctr)
}

// deployed brings a Casino to a running, available v1.
func deployed(t *testing.T, name string) *env {
	t.Helper()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino(name, "registry.example/fairplay:v1")
	e.reconcile(name)
	e.finishJob(migrationJobName(e.casino(name)), true)
	e.reconcile(name)
	e.markDeploymentAvailable(name)
	e.reconcile(name)
	e.expectCondition(name, casinov1alpha1.ConditionReady, metav1.ConditionTrue, casinov1alpha1.ReasonAvailable)
	if s := e.kstatusOf(name); s != kstatus.CurrentStatus {
		t.Fatalf("kstatus of an available Casino = %s, want Current", s)
	}
	e.drainEvents()
	return e
}

// TestFailedMigrationKeepsTheDeployment: a new image whose migrations Job
// fails leaves the running Deployment untouched (same image, same
// generation) and marks the Casino Degraded with the Job's reason.
func TestFailedMigrationKeepsTheDeployment(t *testing.T) {
	t.Parallel()
	e := deployed(t, "fail")
	before := e.deployment("fail")

	e.update("fail", func(c *casinov1alpha1.Casino) { c.Spec.Image = "registry.example/fairplay:v2" })
	e.reconcile("fail")
	v2Job := migrationJobName(e.casino("fail"))
	if !e.get(v2Job, &batchv1.Job{}) {
		t.Fatalf("no migrations job %s for the new image", v2Job)
	}
	if d := e.deployment("fail"); serverImage(d) != "registry.example/fairplay:v1" || d.Generation != before.Generation {
		t.Fatalf("deployment changed while the migration runs: %s generation %d", serverImage(d), d.Generation)
	}
	e.expectCondition("fail", casinov1alpha1.ConditionProgressing, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationRunning)
	e.expectCondition("fail", casinov1alpha1.ConditionReady, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationRunning)
	e.expectCondition("fail", casinov1alpha1.ConditionReconciling, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationRunning)
	e.expectCondition("fail", casinov1alpha1.ConditionStalled, metav1.ConditionFalse, casinov1alpha1.ReasonAsExpected)
	if s := e.kstatusOf("fail"); s != kstatus.InProgressStatus {
		t.Fatalf("kstatus while the migration runs = %s, want InProgress", s)
	}

	e.finishJob(v2Job, false)
	e.reconcile("fail")
	e.reconcile("fail") // a second look changes nothing and repeats no Event

	d := e.deployment("fail")
	if serverImage(d) != "registry.example/fairplay:v1" || d.Generation != before.Generation || d.ResourceVersion != before.ResourceVersion {
		t.Fatalf("failed migration touched the deployment: %s generation %d->%d", serverImage(d), before.Generation, d.Generation)
	}
	deg := e.expectCondition("fail", casinov1alpha1.ConditionDegraded, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationFailed)
	if !strings.Contains(deg.Message, batchv1.JobReasonBackoffLimitExceeded) || !strings.Contains(deg.Message, v2Job) {
		t.Fatalf("Degraded message %q does not carry the Job's reason", deg.Message)
	}
	e.expectCondition("fail", casinov1alpha1.ConditionMigrationsSucceeded, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationFailed)
	e.expectCondition("fail", casinov1alpha1.ConditionReady, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationFailed)
	e.expectCondition("fail", casinov1alpha1.ConditionProgressing, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationFailed)
	// kstatus: Failed (Stalled=True), so helm --wait, Flux and Argo CD stop
	// waiting and report the migration.
	e.expectCondition("fail", casinov1alpha1.ConditionStalled, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationFailed)
	e.expectCondition("fail", casinov1alpha1.ConditionReconciling, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationFailed)
	if s := e.kstatusOf("fail"); s != kstatus.FailedStatus {
		t.Fatalf("kstatus after the migration failed = %s, want Failed", s)
	}
	c := e.casino("fail")
	if c.Status.CurrentImage != "registry.example/fairplay:v1" || c.Status.LastMigration.Image != "registry.example/fairplay:v1" {
		t.Fatalf("status: currentImage %s lastMigration %+v", c.Status.CurrentImage, c.Status.LastMigration)
	}
	evs := e.drainEvents()
	if n := strings.Count(strings.Join(evs, "\n"), " "+eventMigrationFailed+" "); n != 1 {
		t.Fatalf("%d %s events over two reconciles, want 1: %q", n, eventMigrationFailed, evs)
	}
}

// TestCompletedMigrationRollsTheImage: once the new image's Job completes,
// the Deployment rolls to it, status.lastMigration records the Job, and the
// old image's Job is deleted.
func TestCompletedMigrationRollsTheImage(t *testing.T) {
	t.Parallel()
	e := deployed(t, "roll")
	v1Job := migrationJobName(e.casino("roll"))

	e.update("roll", func(c *casinov1alpha1.Casino) { c.Spec.Image = "registry.example/fairplay:v2" })
	e.reconcile("roll")
	v2Job := migrationJobName(e.casino("roll"))
	e.finishJob(v2Job, true)
	e.reconcile("roll")

	d := e.deployment("roll")
	if serverImage(d) != "registry.example/fairplay:v2" {
		t.Fatalf("deployment image = %s, want v2", serverImage(d))
	}
	c := e.casino("roll")
	if c.Status.LastMigration == nil || c.Status.LastMigration.Image != "registry.example/fairplay:v2" ||
		c.Status.LastMigration.JobName != v2Job || c.Status.LastMigration.CompletionTime == nil {
		t.Fatalf("lastMigration = %+v", c.Status.LastMigration)
	}
	e.expectCondition("roll", casinov1alpha1.ConditionMigrationsSucceeded, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationSucceeded)
	e.expectCondition("roll", casinov1alpha1.ConditionProgressing, metav1.ConditionTrue, casinov1alpha1.ReasonRollingOut)
	if e.get(v1Job, &batchv1.Job{}) {
		t.Errorf("the previous image's job %s was kept", v1Job)
	}
	if !e.get(v2Job, &batchv1.Job{}) {
		t.Errorf("the current image's job %s was deleted", v2Job)
	}
	evs := e.drainEvents()
	if !hasEvent(evs, eventRollingOut) || !hasEvent(evs, eventMigrationSucceeded) {
		t.Fatalf("events: %q", evs)
	}

	e.markDeploymentAvailable("roll")
	e.reconcile("roll")
	e.expectCondition("roll", casinov1alpha1.ConditionReady, metav1.ConditionTrue, casinov1alpha1.ReasonAvailable)
}

// TestImageSetBackLetsARunningMigrationFinish: spec.image set back to the
// running image while a newer one migrates (the way out of a stuck
// upgrade) leaves the newer image's Job running to its end; only then is it
// deleted. Found by a review: it was deleted at once, stopping its
// migrations part-way.
func TestImageSetBackLetsARunningMigrationFinish(t *testing.T) {
	t.Parallel()
	e := deployed(t, "setback")
	v1Job := migrationJobName(e.casino("setback"))

	e.update("setback", func(c *casinov1alpha1.Casino) { c.Spec.Image = "registry.example/fairplay:v2" })
	e.reconcile("setback")
	v2Job := migrationJobName(e.casino("setback"))
	e.update("setback", func(c *casinov1alpha1.Casino) { c.Spec.Image = "registry.example/fairplay:v1" })
	e.reconcile("setback")
	if serverImage(e.deployment("setback")) != "registry.example/fairplay:v1" {
		t.Fatalf("deployment image = %s, want v1", serverImage(e.deployment("setback")))
	}
	if !e.get(v2Job, &batchv1.Job{}) {
		t.Fatalf("the running job %s of the image set back was deleted part-way", v2Job)
	}
	if !e.get(v1Job, &batchv1.Job{}) {
		t.Fatalf("the current image's job %s was deleted", v1Job)
	}

	e.finishJob(v2Job, true)
	e.reconcile("setback")
	if e.get(v2Job, &batchv1.Job{}) {
		t.Errorf("the finished job %s of an image no longer wanted was kept", v2Job)
	}
	if serverImage(e.deployment("setback")) != "registry.example/fairplay:v1" {
		t.Errorf("deployment image = %s after the old job ended, want v1", serverImage(e.deployment("setback")))
	}
}

// TestMissingSecretWaitsWithoutAJob: a Casino whose database Secret does
// not exist gets no Job (its pod could not start) and says why.
func TestMissingSecretWaitsWithoutAJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.newCasino("nosecret", "registry.example/fairplay:v1")
	res := e.reconcile("nosecret")
	e.reconcile("nosecret")
	if n := strings.Count(strings.Join(e.drainEvents(), "\n"), " "+eventSecretNotFound+" "); n != 1 {
		t.Fatalf("%d %s events over two reconciles, want 1", n, eventSecretNotFound)
	}
	if res.RequeueAfter > 30*time.Second {
		t.Fatalf("RequeueAfter = %v, want a quick second look", res.RequeueAfter)
	}
	if e.get(migrationJobName(e.casino("nosecret")), &batchv1.Job{}) {
		t.Fatal("job created although its Secret is missing")
	}
	deg := e.expectCondition("nosecret", casinov1alpha1.ConditionDegraded, metav1.ConditionTrue, casinov1alpha1.ReasonSecretNotFound)
	if !strings.Contains(deg.Message, "fairplay-db") {
		t.Fatalf("message %q does not name the Secret", deg.Message)
	}
	if !e.get("nosecret-signing-keys", &corev1.Secret{}) {
		t.Fatal("signing keys not created while waiting")
	}

	e.createSecrets()
	e.reconcile("nosecret")
	if !e.get(migrationJobName(e.casino("nosecret")), &batchv1.Job{}) {
		t.Fatal("no job once the Secrets exist")
	}
	e.expectCondition("nosecret", casinov1alpha1.ConditionDegraded, metav1.ConditionFalse, casinov1alpha1.ReasonAsExpected)
	if e.get("nosecret", &appsv1.Deployment{}) {
		t.Fatal("deployment before the migration")
	}
}

// TestForeignMigrationJobIsNoSuccess: a Job made ahead under the name of an
// image's migrations Job, with a controller reference to the Casino (which
// anyone who may create Jobs in the namespace can write), counts as no
// migration unless it runs the one the operator builds. Found by a review
// playing a hostile tenant: such a Job that ran `fairplay version`
// completed, and the operator recorded the migration and rolled the image
// onto an unmigrated database. The Casino deletes it (a Warning says so),
// takes nothing from it, and migrates with its own Job.
func TestForeignMigrationJobIsNoSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	for _, f := range []struct {
		name  string
		forge func(*batchv1.Job)
	}{
		{"version", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Args = []string{"version"} }},
		{"command", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Command = []string{"/operator", "--help"} }},
		{"image", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "registry.example/true:v1" }},
		{"empty-db", func(j *batchv1.Job) {
			j.Spec.Template.Spec.Containers[0].Env[0] = secretEnv("DATABASE_URL", "empty-db", "uri")
		}},
		{"no-pods", func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](0) }},
		{"sidecar", func(j *batchv1.Job) {
			c := j.Spec.Template.Spec.Containers[0]
			c.Name = "other"
			j.Spec.Template.Spec.Containers = append(j.Spec.Template.Spec.Containers, c)
		}},
	} {
		name := f.name
		c := e.newCasino(name, "registry.example/fairplay:v1")
		jobName := migrationJobName(c)
		forged := desiredMigrationJob(c, jobName)
		f.forge(forged)
		must(t, controllerutil.SetControllerReference(c, forged, testScheme))
		must(t, k8sClient.Create(e.ctx, forged))
		e.finishJob(jobName, true)
		e.drainEvents()

		res := e.reconcile(name)
		if c := e.casino(name); c.Status.LastMigration != nil {
			t.Fatalf("%s: the foreign Job was recorded as a migration: %+v", name, c.Status.LastMigration)
		}
		e.expectCondition(name, casinov1alpha1.ConditionMigrationsSucceeded, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationRunning)
		if e.get(name, &appsv1.Deployment{}) {
			t.Fatalf("%s: a Deployment rolled out on the foreign Job's word", name)
		}
		if e.get(jobName, &batchv1.Job{}) {
			t.Fatalf("%s: the foreign Job was kept", name)
		}
		if evs := e.drainEvents(); !hasEvent(evs, eventForeignMigrationJob) {
			t.Fatalf("%s: events %q, want a %s Warning", name, evs, eventForeignMigrationJob)
		}
		if res.RequeueAfter <= 0 || res.RequeueAfter > 5*time.Second {
			t.Fatalf("%s: RequeueAfter = %v, want a quick second look", name, res.RequeueAfter)
		}

		// The next look makes the Casino's own Job, whose success counts.
		e.reconcile(name)
		var own batchv1.Job
		if !e.get(jobName, &own) || !runsAsBuilt(&own, &desiredMigrationJob(e.casino(name), jobName).Spec) {
			t.Fatalf("%s: no migrations Job of the Casino's own after the foreign one", name)
		}
		e.finishJob(jobName, true)
		e.reconcile(name)
		if c := e.casino(name); c.Status.LastMigration == nil || c.Status.LastMigration.JobName != jobName {
			t.Fatalf("%s: lastMigration = %+v after the Casino's own Job", name, c.Status.LastMigration)
		}
		if !e.get(name, &appsv1.Deployment{}) {
			t.Fatalf("%s: no Deployment after the Casino's own migration", name)
		}
	}
}

// policyClient changes each Job it creates as a mutating admission policy
// would (Kyverno's add-ndots sample, applied to Jobs as to pods), between
// the reconciler and the API server.
type policyClient struct{ client.Client }

func (p policyClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if job, ok := obj.(*batchv1.Job); ok {
		job.Spec.Template.Spec.DNSConfig = &corev1.PodDNSConfig{
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("1")}},
		}
	}
	return p.Client.Create(ctx, obj, opts...)
}

// TestMigrationsCountUnderAnAdmissionPolicy: an admission policy that
// changes every Job's pod (a DNS option) does not make the operator's own
// migrations Job foreign. Judged by its pod alone, the Job was deleted when
// it finished and made again, without end: the image never rolled out
// (found by a review). The Job the operator created counts by its UID; a
// Job someone else made under its name still does not.
func TestMigrationsCountUnderAnAdmissionPolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.r.Client = policyClient{k8sClient}
	c := e.newCasino("ndots", "registry.example/fairplay:v1")
	jobName := migrationJobName(c)
	e.reconcile("ndots")
	var job batchv1.Job
	if !e.get(jobName, &job) || job.Spec.Template.Spec.DNSConfig == nil {
		t.Fatalf("no migrations Job changed by the policy")
	}
	uid := job.UID
	e.finishJob(jobName, true)
	e.reconcile("ndots")
	if !e.get(jobName, &job) || job.UID != uid {
		t.Fatalf("the operator's own Job was deleted as foreign (events %q)", e.drainEvents())
	}
	if c := e.casino("ndots"); c.Status.LastMigration == nil || c.Status.LastMigration.JobName != jobName {
		t.Fatalf("lastMigration = %+v after the operator's own Job succeeded", c.Status.LastMigration)
	}
	e.expectCondition("ndots", casinov1alpha1.ConditionMigrationsSucceeded, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationSucceeded)
	if !e.get("ndots", &appsv1.Deployment{}) {
		t.Fatalf("no Deployment after the migration")
	}

	// Another operator (a restart) did not create it: the policy's change
	// is judged as anyone's, the Job run again once, then counted.
	e.update("ndots", func(c *casinov1alpha1.Casino) { c.Spec.Image = "registry.example/fairplay:v2" })
	e.reconcile("ndots")
	jobName = migrationJobName(e.casino("ndots"))
	e.finishJob(jobName, true)
	restarted := &CasinoReconciler{Client: policyClient{k8sClient}, APIReader: k8sClient, Scheme: testScheme,
		Recorder: e.recorder, Clock: e.clock}
	if _, err := restarted.Reconcile(e.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "ndots"}}); err != nil {
		t.Fatal(err)
	}
	if e.get(jobName, &job) && job.DeletionTimestamp.IsZero() {
		t.Fatalf("a restarted operator took a changed Job it did not create")
	}
	reconcileRestarted := func() {
		t.Helper()
		if _, err := restarted.Reconcile(e.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "ndots"}}); err != nil {
			t.Fatal(err)
		}
	}
	reconcileRestarted() // makes its own
	e.finishJob(jobName, true)
	reconcileRestarted()
	if c := e.casino("ndots"); c.Status.LastMigration == nil || c.Status.LastMigration.Image != "registry.example/fairplay:v2" {
		t.Fatalf("lastMigration = %+v after the restarted operator's own Job", c.Status.LastMigration)
	}
}
