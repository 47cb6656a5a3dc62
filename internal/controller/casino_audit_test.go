package controller

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// startAuditJob makes the Job the CronJob controller would start from the
// CronJob's template (envtest runs no controllers); mutate, if given,
// changes it first, as `kubectl create job --from=cronjob/... --dry-run -o
// yaml` edited by hand would.
func (e *env) startAuditJob(casino, name string, mutate ...func(*batchv1.Job)) {
	e.t.Helper()
	var cj batchv1.CronJob
	if !e.get(ledgerAuditName(e.casino(casino)), &cj) {
		e.t.Fatal("no ledger audit CronJob")
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: cj.Spec.JobTemplate.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))}},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	for _, m := range mutate {
		m(job)
	}
	must(e.t, k8sClient.Create(e.ctx, job))
}

// TestLedgerAudit: spec.ledgerAudit makes a CronJob running `fairplay ledger
// verify` with the running image under the restricted pod standard; the
// newest finished audit Job sets the LedgerAudit condition, the status and
// the metrics (a failure is False/LedgerAuditFailed, a later success True),
// where only the CronJob's Jobs that ran the audit it builds count;
// removing spec.ledgerAudit deletes the CronJob and clears the condition and
// its series.
func TestLedgerAudit(t *testing.T) {
	t.Parallel()
	e := deployed(t, "audit")
	e.update("audit", func(c *casinov1alpha1.Casino) {
		c.Spec.LedgerAudit = &casinov1alpha1.LedgerAuditSpec{Schedule: "17 * * * *", TimeZone: "Europe/Berlin"}
	})
	e.reconcile("audit")
	var cj batchv1.CronJob
	if !e.get("audit-ledger-audit", &cj) {
		t.Fatal("no CronJob audit-ledger-audit")
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	ctr := pod.Containers[0]
	if cj.Spec.Schedule != "17 * * * *" || *cj.Spec.TimeZone != "Europe/Berlin" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent ||
		ctr.Image != "registry.example/fairplay:v1" || !slices.Equal(ctr.Args, []string{"ledger", "verify"}) {
		t.Fatalf("cronjob: schedule %q tz %v policy %s image %s args %v", cj.Spec.Schedule, cj.Spec.TimeZone, cj.Spec.ConcurrencyPolicy, ctr.Image, ctr.Args)
	}
	if len(ctr.Env) == 0 || ctr.Env[0].Name != "DATABASE_URL" || ctr.Env[0].ValueFrom.SecretKeyRef.Name != "fairplay-db" {
		t.Fatalf("env = %+v, want DATABASE_URL from the Casino's Secret", ctr.Env)
	}
	if cj.Spec.JobTemplate.Spec.Template.Labels[labelInstance] != "audit" || cj.Spec.JobTemplate.Spec.Template.Labels[labelManagedBy] != ManagedByValue {
		t.Fatalf("pod labels %v: the Casino's NetworkPolicy would not select the audit pods", cj.Spec.JobTemplate.Spec.Template.Labels)
	}
	assertRestricted(t, pod, ctr)
	if !metav1.IsControlledBy(&cj, e.casino("audit")) {
		t.Fatal("the CronJob is not owned by the Casino")
	}
	if c := e.casino("audit"); c.Status.LastLedgerAudit != nil || hasCondition(c, casinov1alpha1.ConditionLedgerAudit) {
		t.Fatalf("a result before any audit ran: %+v", c.Status.LastLedgerAudit)
	}

	e.startAuditJob("audit", "audit-ledger-audit-1")
	e.finishJob("audit-ledger-audit-1", false)
	e.reconcile("audit")
	cond := e.expectCondition("audit", casinov1alpha1.ConditionLedgerAudit, metav1.ConditionFalse, casinov1alpha1.ReasonLedgerAuditFailed)
	if !strings.Contains(cond.Message, "audit-ledger-audit-1") || !strings.Contains(cond.Message, batchv1.JobReasonBackoffLimitExceeded) {
		t.Fatalf("LedgerAudit message %q does not name the Job and its reason", cond.Message)
	}
	if last := e.casino("audit").Status.LastLedgerAudit; last == nil || last.JobName != "audit-ledger-audit-1" || last.Succeeded {
		t.Fatalf("lastLedgerAudit = %+v", last)
	}
	// Not part of Ready: a drift pages someone but the Casino keeps serving.
	e.expectCondition("audit", casinov1alpha1.ConditionReady, metav1.ConditionTrue, casinov1alpha1.ReasonAvailable)
	if v := testutil.ToFloat64(CasinoCondition.WithLabelValues(e.ns, "audit", "LedgerAudit", "False")); v != 1 {
		t.Fatalf("fairplay_operator_casino_condition{type=LedgerAudit,status=False} = %v", v)
	}
	if v := testutil.ToFloat64(LedgerAuditCompletion.WithLabelValues(e.ns, "audit", "failed")); v != float64(e.clock.Now().Unix()) {
		t.Fatalf("ledger audit completion (failed) = %v, want %d", v, e.clock.Now().Unix())
	}

	// A Job that only carries the audit's labels — anyone who may create
	// Jobs in the namespace can write them — does not count: it would
	// report a passing audit after a failed one (found by a review playing a
	// hostile tenant). Only the CronJob's own Jobs do.
	e.clock.Step(30 * time.Minute)
	var cronJob batchv1.CronJob
	if !e.get("audit-ledger-audit", &cronJob) {
		t.Fatal("no CronJob audit-ledger-audit")
	}
	forged := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "totally-legit", Namespace: e.ns, Labels: cronJob.Spec.JobTemplate.Labels},
		Spec:       *cronJob.Spec.JobTemplate.Spec.DeepCopy(),
	}
	must(t, k8sClient.Create(e.ctx, forged))
	e.finishJob("totally-legit", true)
	e.reconcile("audit")
	e.expectCondition("audit", casinov1alpha1.ConditionLedgerAudit, metav1.ConditionFalse, casinov1alpha1.ReasonLedgerAuditFailed)
	if last := e.casino("audit").Status.LastLedgerAudit; last == nil || last.JobName != "audit-ledger-audit-1" {
		t.Fatalf("after a forged Job: lastLedgerAudit = %+v, want the CronJob's failed audit-ledger-audit-1", last)
	}

	// Nor does a Job of the CronJob (started from it by hand, so controlled
	// by it) that runs something other than the audit the operator builds:
	// `fairplay version` completes, as does an audit of an empty database
	// or a Job of no completions (found by a review playing a hostile
	// tenant: the first hid the failed audit).
	for _, f := range []struct {
		name  string
		forge func(*batchv1.Job)
	}{
		{"command", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Command = []string{"/operator", "--help"} }},
		{"empty-db", func(j *batchv1.Job) {
			j.Spec.Template.Spec.Containers[0].Env[0] = secretEnv("DATABASE_URL", "empty-db", "uri")
		}},
		{"no-pods", func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](0) }},
		{"init", func(j *batchv1.Job) {
			c := j.Spec.Template.Spec.Containers[0]
			c.Name, c.Args = "first", []string{"version"}
			j.Spec.Template.Spec.InitContainers = []corev1.Container{c}
		}},
		{"version", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Args = []string{"version"} }},
	} {
		e.clock.Step(time.Minute)
		e.startAuditJob("audit", "audit-ledger-audit-"+f.name, f.forge)
		e.finishJob("audit-ledger-audit-"+f.name, true)
	}
	// Judged without reading a Job again: a tenant's Jobs of the CronJob
	// each cost every reconcile a read of the API server when they were
	// (found by a review), which a Job being deleted (held by a finalizer)
	// never stopped.
	reads := &jobReads{Reader: k8sClient}
	e.r.APIReader = reads
	e.drainEvents()
	e.reconcile("audit")
	e.r.APIReader = k8sClient
	if n := reads.n.Load(); n != 0 {
		t.Fatalf("the reconcile read %d Jobs from the API server to judge the audits", n)
	}
	e.expectCondition("audit", casinov1alpha1.ConditionLedgerAudit, metav1.ConditionFalse, casinov1alpha1.ReasonLedgerAuditFailed)
	if last := e.casino("audit").Status.LastLedgerAudit; last == nil || last.JobName != "audit-ledger-audit-1" {
		t.Fatalf("after Jobs of the CronJob that ran something else: lastLedgerAudit = %+v, want the failed audit-ledger-audit-1", last)
	}
	if evs := e.drainEvents(); !hasEvent(evs, eventLedgerAuditIgnored) {
		t.Fatalf("events %q: the ignored audits were not reported (%s)", evs, eventLedgerAuditIgnored)
	}
	// A Job cannot carry the cache's fingerprint itself: the key is no
	// valid annotation key.
	carrier := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "carrier", Namespace: e.ns, Annotations: map[string]string{cachedRunFingerprint: "x"}},
		Spec:       *cronJob.Spec.JobTemplate.Spec.DeepCopy(),
	}
	if err := k8sClient.Create(e.ctx, carrier); err == nil {
		t.Fatalf("the API server took a Job annotated %q", cachedRunFingerprint)
	}

	e.clock.Step(time.Hour)
	e.startAuditJob("audit", "audit-ledger-audit-2")
	e.finishJob("audit-ledger-audit-2", true)
	e.reconcile("audit")
	e.expectCondition("audit", casinov1alpha1.ConditionLedgerAudit, metav1.ConditionTrue, casinov1alpha1.ReasonLedgerVerified)
	if v := testutil.ToFloat64(CasinoCondition.WithLabelValues(e.ns, "audit", "LedgerAudit", "True")); v != 1 {
		t.Fatalf("condition metric after a success = %v", v)
	}
	if n := testutil.CollectAndCount(LedgerAuditCompletion); n < 1 {
		t.Fatal("no ledger audit completion series")
	}
	if v := testutil.ToFloat64(LedgerAuditCompletion.WithLabelValues(e.ns, "audit", "succeeded")); v != float64(e.clock.Now().Unix()) {
		t.Fatalf("ledger audit completion (succeeded) = %v", v)
	}

	e.update("audit", func(c *casinov1alpha1.Casino) { c.Spec.LedgerAudit = nil })
	e.reconcile("audit")
	if e.get("audit-ledger-audit", &batchv1.CronJob{}) {
		t.Fatal("the CronJob outlived spec.ledgerAudit")
	}
	if c := e.casino("audit"); hasCondition(c, casinov1alpha1.ConditionLedgerAudit) || c.Status.LastLedgerAudit != nil {
		t.Fatalf("the audit's verdict outlived spec.ledgerAudit: %+v", c.Status.LastLedgerAudit)
	}
	if v := testutil.ToFloat64(CasinoCondition.WithLabelValues(e.ns, "audit", "LedgerAudit", "True")); v != 0 {
		t.Fatalf("the LedgerAudit series outlived spec.ledgerAudit")
	}
}

// TestLedgerAuditScheduleValidation: the API refuses a schedule that is not
// cron, so a typo never reaches the CronJob.
func TestLedgerAuditScheduleValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &casinov1alpha1.Casino{
		ObjectMeta: metav1.ObjectMeta{Name: "badcron", Namespace: e.ns},
		Spec: casinov1alpha1.CasinoSpec{
			Image:       "registry.example/fairplay:v1",
			Database:    casinov1alpha1.DatabaseSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "db", Key: "uri"}},
			Redis:       casinov1alpha1.RedisSpec{URLSecretRef: casinov1alpha1.SecretKeyRef{Name: "redis", Key: "url"}},
			LedgerAudit: &casinov1alpha1.LedgerAuditSpec{Schedule: "every hour"},
		},
	}
	err := k8sClient.Create(e.ctx, c)
	if err == nil || !strings.Contains(err.Error(), "spec.ledgerAudit.schedule") {
		t.Fatalf("create with schedule %q: %v, want a validation error on spec.ledgerAudit.schedule", c.Spec.LedgerAudit.Schedule, err)
	}
}

func hasCondition(c *casinov1alpha1.Casino, t casinov1alpha1.ConditionType) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == string(t) {
			return true
		}
	}
	return false
}

// TestLedgerAuditJobWakesItsCasino: a ledger-audit Job, also one started by
// hand from the CronJob (whose owner is the CronJob, not the Casino, and
// which changes no CronJob status), maps to its Casino; other Jobs do not.
// The real node caught a hand-started audit whose failure never reached
// the condition before this watch existed.
func TestLedgerAuditJobWakesItsCasino(t *testing.T) {
	t.Parallel()
	c := fullCasino()
	audit := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "audit-now", Namespace: c.Namespace, Labels: labelsFor(c, componentLedgerAudit)}}
	got := ledgerAuditJobToCasino(t.Context(), audit)
	if len(got) != 1 || got[0].Namespace != c.Namespace || got[0].Name != c.Name {
		t.Fatalf("audit job maps to %v, want %s/%s", got, c.Namespace, c.Name)
	}
	for _, other := range []map[string]string{
		labelsFor(c, componentMigrations),
		{labelComponent: componentLedgerAudit, casinov1alpha1.LabelCasino: c.Name}, // not made by the operator
		nil,
	} {
		if got := ledgerAuditJobToCasino(t.Context(), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: c.Namespace, Labels: other}}); len(got) != 0 {
			t.Errorf("job with labels %v maps to %v", other, got)
		}
	}
}

// jobReads counts the Jobs read through it.
type jobReads struct {
	client.Reader
	n atomic.Int64
}

func (r *jobReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*batchv1.Job); ok {
		r.n.Add(1)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
