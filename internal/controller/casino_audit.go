package controller

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// The ledger audit's Jobs: one attempt after the first (a database blip),
// an hour at most, and no overlap (a slow audit is not started twice).
const (
	ledgerAuditBackoffLimit    = 1
	ledgerAuditDeadlineSeconds = 60 * 60
	ledgerAuditHistory         = 3
)

// auditState is what the ledger-audit step found.
type auditState struct {
	// configured: spec.ledgerAudit is set.
	configured bool
	// last is the newest finished audit Job (nil: none yet).
	last *casinov1alpha1.LedgerAuditStatus
	// message explains last (the Job's failure reason, or success).
	message string
	// skipped: the step did not run (a missing Secret stopped the
	// reconcile before it); the status keeps what it said.
	skipped bool
}

func ledgerAuditName(casino *casinov1alpha1.Casino) string {
	return casino.Name + "-ledger-audit"
}

// reconcileLedgerAudit applies the CronJob of spec.ledgerAudit (or deletes
// the one the Casino owns when it is unset) and reads the newest finished
// audit Job. image is the image the Deployment runs: the audit reads the
// schema that image migrated, not one whose migrations may not have run.
func (r *CasinoReconciler) reconcileLedgerAudit(ctx context.Context, casino *casinov1alpha1.Casino, image string) (auditState, error) {
	name := ledgerAuditName(casino)
	if casino.Spec.LedgerAudit == nil || image == "" {
		var cj batchv1.CronJob
		err := r.Get(ctx, types.NamespacedName{Namespace: casino.Namespace, Name: name}, &cj)
		if apierrors.IsNotFound(err) {
			return auditState{configured: casino.Spec.LedgerAudit != nil}, nil
		}
		if err != nil {
			return auditState{}, fmt.Errorf("get cronjob %s: %w", name, err)
		}
		if casino.Spec.LedgerAudit == nil && metav1.IsControlledBy(&cj, casino) && cj.DeletionTimestamp.IsZero() {
			if err := r.Delete(ctx, &cj, client.PropagationPolicy(metav1.DeletePropagationBackground),
				client.Preconditions{UID: ptr.To(cj.UID)}); client.IgnoreNotFound(err) != nil {
				return auditState{}, fmt.Errorf("delete cronjob %s: %w", name, err)
			}
			return auditState{}, nil
		}
	} else if err := r.apply(ctx, casino, desiredLedgerAudit(casino, image)); err != nil {
		return auditState{}, err
	}

	st := auditState{configured: casino.Spec.LedgerAudit != nil}
	// Only the CronJob's own Jobs count: those it started, and those started
	// by hand from it (kubectl create job --from=cronjob/...), both
	// controlled by it, and of those only the ones that ran the audit as
	// the operator builds it (newestAudit). A Job that merely carries the
	// audit's labels — which anyone who may create Jobs in the namespace
	// can write — would otherwise report a passing audit after a failed
	// one. Found by a review playing a hostile tenant.
	var cj batchv1.CronJob
	if err := r.Get(ctx, types.NamespacedName{Namespace: casino.Namespace, Name: name}, &cj); err != nil {
		if apierrors.IsNotFound(err) {
			return st, nil // not in the cache yet: no audit has run
		}
		return st, fmt.Errorf("get cronjob %s: %w", name, err)
	}
	if !metav1.IsControlledBy(&cj, casino) {
		return st, nil
	}
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(casino.Namespace),
		client.MatchingLabels{labelInstance: casino.Name, labelComponent: componentLedgerAudit}); err != nil {
		return st, fmt.Errorf("list ledger audit jobs: %w", err)
	}
	var done []*batchv1.Job
	for i := range jobs.Items {
		if ok, _ := jobFinished(&jobs.Items[i]); ok && metav1.IsControlledBy(&jobs.Items[i], &cj) {
			done = append(done, &jobs.Items[i])
		}
	}
	job, cond, ignored := newestAudit(&cj, ledgerAuditJobSpec(casino, image), done)
	if ignored > 0 {
		// The newest audits did not count: said once per reconcile, so
		// that a policy changing the audit's pods is seen before the
		// stale alert fires.
		r.event(casino, corev1.EventTypeWarning, eventLedgerAuditIgnored, "Audit",
			"%d finished ledger audit Jobs newer than the last one taken did not run the audit this Casino builds (someone else made or changed them, or an admission policy changes the audit's pods) and were not taken", ignored)
	}
	if job == nil {
		return st, nil
	}
	at := cond.LastTransitionTime
	st.last = &casinov1alpha1.LedgerAuditStatus{JobName: job.Name, Succeeded: cond.Type == batchv1.JobComplete, CompletionTime: &at}
	if st.last.Succeeded {
		st.message = fmt.Sprintf("Job %s found every balance and bet in line with the ledger", job.Name)
	} else {
		st.message = fmt.Sprintf("Job %s failed (%s: %s): drift between balances and the ledger, or the audit could not run; read kubectl logs job/%s",
			job.Name, cond.Reason, cond.Message, job.Name)
	}
	return st, nil
}

// newestAudit is the newest of the finished Jobs of the CronJob cj (as the
// cache has them) that ran the audit the operator builds, want, for the
// running image (runsAsBuilt, by the fingerprint the cache keeps of each
// Job: no Job is read again, so a tenant's Jobs cost a reconcile nothing
// but memory the cache bounds), and its terminal condition; nil when none
// did. Jobs being deleted are left out. Being the CronJob's is not enough:
// a Job started from it with other arguments, another command or another
// database completed and hid a failed audit (found by a review playing a
// hostile tenant). A Job of an earlier image or spec counts no more either;
// the status keeps the verdict it gave until an audit of the running image
// finishes (FairplayLedgerAuditStale fires if none does), and ignored is
// how many finished Jobs were passed over, for the condition's message: an
// admission policy that changes the audit's pods (a DNS option, a
// variable) makes every audit one.
func newestAudit(cj *batchv1.CronJob, want batchv1.JobSpec, done []*batchv1.Job) (job *batchv1.Job, cond batchv1.JobCondition, ignored int) {
	slices.SortFunc(done, func(a, b *batchv1.Job) int {
		_, ca := jobFinished(a)
		_, cb := jobFinished(b)
		return cb.LastTransitionTime.Compare(ca.LastTransitionTime.Time)
	})
	for _, j := range done {
		ok, c := jobFinished(j)
		if !ok || !metav1.IsControlledBy(j, cj) || !j.DeletionTimestamp.IsZero() {
			continue
		}
		if !runsAsBuilt(j, &want) {
			ignored++
			continue
		}
		return j, c, ignored
	}
	return nil, batchv1.JobCondition{}, ignored
}

// desiredLedgerAudit starts ledgerAuditJobSpec's Job on spec.ledgerAudit's
// schedule.
func desiredLedgerAudit(casino *casinov1alpha1.Casino, image string) *batchv1.CronJob {
	spec := casino.Spec.LedgerAudit
	labels := labelsFor(casino, componentLedgerAudit)
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: ledgerAuditName(casino), Namespace: casino.Namespace, Labels: labels},
		Spec: batchv1.CronJobSpec{
			Schedule:                   spec.Schedule,
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			Suspend:                    ptr.To(spec.Suspend),
			SuccessfulJobsHistoryLimit: ptr.To[int32](ledgerAuditHistory),
			FailedJobsHistoryLimit:     ptr.To[int32](ledgerAuditHistory),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       ledgerAuditJobSpec(casino, image),
			},
		},
	}
	if spec.TimeZone != "" {
		cj.Spec.TimeZone = ptr.To(spec.TimeZone)
	}
	return cj
}

// ledgerAuditJobSpec is the Job the audit CronJob starts: `fairplay ledger
// verify` with image (the one the Deployment runs), under the same pod
// constraints as the migrations.
func ledgerAuditJobSpec(casino *casinov1alpha1.Casino, image string) batchv1.JobSpec {
	labels := labelsFor(casino, componentLedgerAudit)
	pod := basePodSpec(casino)
	pod.RestartPolicy = corev1.RestartPolicyNever
	pod.Containers = []corev1.Container{{
		Name:            "ledger-verify",
		Image:           image,
		ImagePullPolicy: casino.Spec.ImagePullPolicy,
		Command:         []string{fairplayBinary},
		Args:            []string{"ledger", "verify"},
		Env:             migrationEnv(casino),
		Resources:       containerResources(casino),
		SecurityContext: containerSecurityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
	}}
	return batchv1.JobSpec{
		// Set, though they are the defaults, so that the operator's apply
		// owns them and puts them back: a tenant's completions: 0 on the
		// CronJob made every audit Complete without a pod, each then
		// ignored (runsAsBuilt) until the stale alert fired.
		Completions:           ptr.To[int32](1),
		Parallelism:           ptr.To[int32](1),
		CompletionMode:        ptr.To(batchv1.NonIndexedCompletion),
		BackoffLimit:          ptr.To[int32](ledgerAuditBackoffLimit),
		ActiveDeadlineSeconds: ptr.To[int64](ledgerAuditDeadlineSeconds),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: casino.Spec.PodAnnotations},
			Spec:       pod,
		},
	}
}
