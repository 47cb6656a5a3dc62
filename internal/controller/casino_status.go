package controller

import (
	"context"
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// observation is what one reconcile found; applyTo turns it into status.
type observation struct {
	desiredReplicas int32
	keys            keyState
	// missingSecret names a referenced Secret or key that does not exist.
	missingSecret string
	migration     migrationState
	// audit is the ledger audit's last result.
	audit auditState
	// deployment is the server Deployment after the apply (nil: none yet).
	deployment   *appsv1.Deployment
	requeueAfter time.Duration
}

// condition is one condition to set, before generation and time are added.
type condition struct {
	status  metav1.ConditionStatus
	reason  casinov1alpha1.ConditionReason
	message string
}

// applyTo writes the observation into st: the status fields, then the
// conditions. A reconcile error marks the Casino Degraded and Reconciling
// (it is retried) and leaves the other conditions as they were (they
// describe the last complete look).
// Transition times come from now (the reconciler's clock).
func (o *observation) applyTo(st *casinov1alpha1.CasinoStatus, generation int64, now time.Time, reconcileErr error) {
	if o.keys.secretName != "" {
		st.SigningKeysSecret = o.keys.secretName
		st.ActiveKeyID = o.keys.activeID
		st.KeyIDs = o.keys.ids
		next := metav1.NewTime(o.keys.nextRotation)
		st.NextRotation = &next
		if lf := o.keys.lastForced; lf != nil {
			t := metav1.NewTime(*lf)
			st.LastForcedRotation = &t
		}
	}
	if o.migration.record != nil {
		st.LastMigration = o.migration.record
	}
	if o.audit.last != nil {
		st.LastLedgerAudit = o.audit.last
	}
	if d := o.deployment; d != nil {
		st.CurrentImage = serverImage(d)
		st.Replicas = d.Status.Replicas
		st.AvailableReplicas = d.Status.AvailableReplicas
		if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
			st.Selector = sel.String()
		}
	}

	set := func(t casinov1alpha1.ConditionType, c condition) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: string(t), Status: c.status, Reason: string(c.reason), Message: c.message, ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	if reconcileErr != nil {
		set(casinov1alpha1.ConditionDegraded, condition{metav1.ConditionTrue, casinov1alpha1.ReasonReconcileError, reconcileErr.Error()})
		// The operator retries with back-off, so for kstatus the Casino is
		// still in progress (not Stalled: nothing says a person must act).
		set(casinov1alpha1.ConditionReconciling, condition{metav1.ConditionTrue, casinov1alpha1.ReasonReconcileError,
			"Retrying with back-off: " + reconcileErr.Error()})
		return
	}
	st.ObservedGeneration = generation
	for t, c := range o.conditions() {
		set(t, c)
	}
	// LedgerAudit reports the newest finished audit, and disappears with
	// spec.ledgerAudit (a stale verdict would keep paging).
	switch a := o.audit; {
	case a.skipped:
	case !a.configured:
		meta.RemoveStatusCondition(&st.Conditions, string(casinov1alpha1.ConditionLedgerAudit))
		st.LastLedgerAudit = nil
	case a.last != nil && a.last.Succeeded:
		set(casinov1alpha1.ConditionLedgerAudit, condition{metav1.ConditionTrue, casinov1alpha1.ReasonLedgerVerified, a.message})
	case a.last != nil:
		set(casinov1alpha1.ConditionLedgerAudit, condition{metav1.ConditionFalse, casinov1alpha1.ReasonLedgerAuditFailed, a.message})
	}
}

// conditions derives the conditions from the observation: the four of the
// Casino API and kstatus's pair (see kstatusConditions).
func (o *observation) conditions() map[casinov1alpha1.ConditionType]condition {
	out := o.casinoConditions()
	maps.Copy(out, kstatusConditions(out))
	return out
}

// kstatusConditions derives Reconciling and Stalled, the abnormal-true
// conditions kstatus (Helm 4's --wait, Flux, Argo CD's health checks) reads,
// from the Casino's own: Degraded with a cause only a person can fix
// (failed migration, missing Secret, stuck rollout) is Stalled; progress,
// and replicas that are not all available yet (which kstatus also counts as
// in progress for a Deployment), are Reconciling. Both are False, with the
// reason of Ready, when the Casino is Ready.
func kstatusConditions(c map[casinov1alpha1.ConditionType]condition) map[casinov1alpha1.ConditionType]condition {
	const (
		yes = metav1.ConditionTrue
		no  = metav1.ConditionFalse
	)
	ready, degraded, progressing := c[casinov1alpha1.ConditionReady], c[casinov1alpha1.ConditionDegraded], c[casinov1alpha1.ConditionProgressing]
	stalled := degraded.status == yes && degraded.reason != casinov1alpha1.ReasonUnavailable
	out := map[casinov1alpha1.ConditionType]condition{}
	switch {
	case stalled:
		out[casinov1alpha1.ConditionStalled] = condition{yes, degraded.reason, degraded.message}
		out[casinov1alpha1.ConditionReconciling] = condition{no, degraded.reason, "Waiting for a change to the spec or the cluster: " + degraded.message}
	case progressing.status == yes:
		out[casinov1alpha1.ConditionStalled] = condition{no, casinov1alpha1.ReasonAsExpected, "Nothing blocks progress"}
		out[casinov1alpha1.ConditionReconciling] = condition{yes, progressing.reason, progressing.message}
	case ready.status != yes:
		out[casinov1alpha1.ConditionStalled] = condition{no, casinov1alpha1.ReasonAsExpected, "Nothing blocks progress"}
		out[casinov1alpha1.ConditionReconciling] = condition{yes, ready.reason, ready.message}
	default:
		out[casinov1alpha1.ConditionStalled] = condition{no, casinov1alpha1.ReasonAsExpected, "Nothing blocks progress"}
		out[casinov1alpha1.ConditionReconciling] = condition{no, ready.reason, ready.message}
	}
	return out
}

// casinoConditions derives the four Casino conditions. The order of the
// cases is the order of importance: a missing Secret blocks everything, a
// failed migration blocks the rollout, a running migration or rollout is
// progress, and only then is the Deployment's availability the answer.
func (o *observation) casinoConditions() map[casinov1alpha1.ConditionType]condition {
	const (
		yes = metav1.ConditionTrue
		no  = metav1.ConditionFalse
	)
	out := map[casinov1alpha1.ConditionType]condition{}
	ready := func(c condition) { out[casinov1alpha1.ConditionReady] = c }
	progressing := func(c condition) { out[casinov1alpha1.ConditionProgressing] = c }
	degraded := func(c condition) { out[casinov1alpha1.ConditionDegraded] = c }
	migrated := func(c condition) { out[casinov1alpha1.ConditionMigrationsSucceeded] = c }

	mig := o.migration
	if o.missingSecret != "" {
		c := condition{no, casinov1alpha1.ReasonSecretNotFound, o.missingSecret}
		ready(c)
		progressing(c)
		degraded(condition{yes, c.reason, c.message})
		switch mig.phase {
		case migrationSucceeded:
			migrated(condition{yes, casinov1alpha1.ReasonMigrationSucceeded, mig.message})
		case migrationFailed:
			migrated(condition{no, casinov1alpha1.ReasonMigrationFailed, mig.message})
		case migrationRunning:
			migrated(condition{no, casinov1alpha1.ReasonMigrationRunning, mig.message})
		default:
			migrated(condition{no, c.reason, "Waiting for the referenced Secrets: " + c.message})
		}
		return out
	}

	switch mig.phase {
	case migrationFailed:
		c := condition{no, casinov1alpha1.ReasonMigrationFailed, mig.message}
		migrated(c)
		ready(c)
		progressing(c)
		degraded(condition{yes, c.reason, c.message})
		return out
	case migrationRunning:
		c := condition{no, casinov1alpha1.ReasonMigrationRunning, mig.message}
		migrated(c)
		ready(c)
		progressing(condition{yes, c.reason, c.message})
		degraded(condition{no, casinov1alpha1.ReasonAsExpected, "Nothing needs attention"})
		return out
	case migrationSucceeded:
		migrated(condition{yes, casinov1alpha1.ReasonMigrationSucceeded, mig.message})
	}

	d := o.deployment
	rollout := deploymentRollout(d, o.desiredReplicas)
	switch {
	case rollout.stuck:
		ready(condition{no, casinov1alpha1.ReasonRolloutStuck, rollout.message})
		progressing(condition{no, casinov1alpha1.ReasonRolloutStuck, rollout.message})
		degraded(condition{yes, casinov1alpha1.ReasonRolloutStuck, rollout.message})
	case !rollout.done:
		ready(condition{no, casinov1alpha1.ReasonRollingOut, rollout.message})
		progressing(condition{yes, casinov1alpha1.ReasonRollingOut, rollout.message})
		degraded(condition{no, casinov1alpha1.ReasonAsExpected, "Nothing needs attention"})
	case !rollout.available:
		ready(condition{no, casinov1alpha1.ReasonUnavailable, rollout.message})
		progressing(condition{no, casinov1alpha1.ReasonRolloutComplete, "The rollout is complete"})
		degraded(condition{yes, casinov1alpha1.ReasonUnavailable, rollout.message})
	default:
		ready(condition{yes, casinov1alpha1.ReasonAvailable, rollout.message})
		progressing(condition{no, casinov1alpha1.ReasonRolloutComplete, "The rollout is complete"})
		degraded(condition{no, casinov1alpha1.ReasonAsExpected, "Nothing needs attention"})
	}
	return out
}

// rollout summarises a Deployment's progress towards its spec.
type rollout struct {
	done, available, stuck bool
	message                string
}

// deploymentRollout reads a Deployment the way `kubectl rollout status`
// does: the controller has seen the latest spec, every replica is updated,
// no old replica remains, and the updated ones are available.
func deploymentRollout(d *appsv1.Deployment, want int32) rollout {
	if d == nil {
		return rollout{message: "The Deployment does not exist yet"}
	}
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return rollout{stuck: true, message: fmt.Sprintf("Deployment %s exceeded its progress deadline: %s", d.Name, c.Message)}
		}
	}
	s := d.Status
	switch {
	case s.ObservedGeneration < d.Generation:
		return rollout{message: fmt.Sprintf("Waiting for the Deployment controller to observe generation %d of %s", d.Generation, d.Name)}
	case s.UpdatedReplicas < want:
		return rollout{message: fmt.Sprintf("%d of %d replicas of %s updated", s.UpdatedReplicas, want, serverImage(d))}
	case s.Replicas > s.UpdatedReplicas:
		return rollout{message: fmt.Sprintf("%d old replicas are terminating", s.Replicas-s.UpdatedReplicas)}
	case s.AvailableReplicas < want:
		return rollout{done: true, message: fmt.Sprintf("%d of %d replicas of %s available", s.AvailableReplicas, want, serverImage(d))}
	}
	return rollout{done: true, available: true, message: fmt.Sprintf("%d of %d replicas of %s available", s.AvailableReplicas, want, serverImage(d))}
}

// becameReady reports a Ready transition from anything to True.
func becameReady(before, after *casinov1alpha1.CasinoStatus) bool {
	return !meta.IsStatusConditionTrue(before.Conditions, string(casinov1alpha1.ConditionReady)) &&
		meta.IsStatusConditionTrue(after.Conditions, string(casinov1alpha1.ConditionReady))
}

// patchStatus is the one way the reconciler writes status: it re-reads the
// Casino from the API server, applies mutate to the fresh status, does
// nothing when that changes nothing, and otherwise sends a merge patch
// guarded by the resourceVersion it read (optimistic lock), retrying on
// conflict. casino is updated to the result.
func (r *CasinoReconciler) patchStatus(ctx context.Context, casino *casinov1alpha1.Casino, mutate func(*casinov1alpha1.CasinoStatus)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var latest casinov1alpha1.Casino
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(casino), &latest); err != nil {
			return err
		}
		before := latest.DeepCopy()
		mutate(&latest.Status)
		if equality.Semantic.DeepEqual(before.Status, latest.Status) {
			latest.DeepCopyInto(casino)
			return nil
		}
		if err := r.Status().Patch(ctx, &latest, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		latest.DeepCopyInto(casino)
		return nil
	})
}
