package controller

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

func deploymentWith(replicas int32, status appsv1.DeploymentStatus) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2}}
	d.Spec.Replicas = ptr.To(replicas)
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: serverContainer, Image: "img:v1"}}
	d.Status = status
	return d
}

func TestConditions(t *testing.T) {
	t.Parallel()
	type want struct {
		ready, progressing, degraded, migrated casinov1alpha1.ConditionReason
		readyStatus                            metav1.ConditionStatus
	}
	available := appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}
	succeeded := migrationState{phase: migrationSucceeded, message: "ok"}
	tests := []struct {
		name string
		obs  observation
		want want
	}{
		{"missing secret dominates", observation{missingSecret: "Secret db not found", migration: migrationState{phase: migrationWaiting}},
			want{casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonSecretNotFound, metav1.ConditionFalse}},
		{"missing secret with migrations done", observation{missingSecret: "x", migration: succeeded},
			want{casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonMigrationSucceeded, metav1.ConditionFalse}},
		{"migration running", observation{migration: migrationState{phase: migrationRunning}},
			want{casinov1alpha1.ReasonMigrationRunning, casinov1alpha1.ReasonMigrationRunning, casinov1alpha1.ReasonAsExpected, casinov1alpha1.ReasonMigrationRunning, metav1.ConditionFalse}},
		{"migration failed", observation{migration: migrationState{phase: migrationFailed}, deployment: deploymentWith(2, available)},
			want{casinov1alpha1.ReasonMigrationFailed, casinov1alpha1.ReasonMigrationFailed, casinov1alpha1.ReasonMigrationFailed, casinov1alpha1.ReasonMigrationFailed, metav1.ConditionFalse}},
		{"rolling out", observation{migration: succeeded, deployment: deploymentWith(2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1})},
			want{casinov1alpha1.ReasonRollingOut, casinov1alpha1.ReasonRollingOut, casinov1alpha1.ReasonAsExpected, casinov1alpha1.ReasonMigrationSucceeded, metav1.ConditionFalse}},
		{"generation not observed", observation{migration: succeeded, deployment: deploymentWith(2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2})},
			want{casinov1alpha1.ReasonRollingOut, casinov1alpha1.ReasonRollingOut, casinov1alpha1.ReasonAsExpected, casinov1alpha1.ReasonMigrationSucceeded, metav1.ConditionFalse}},
		{"rolled out but unavailable", observation{migration: succeeded, deployment: deploymentWith(2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1})},
			want{casinov1alpha1.ReasonUnavailable, casinov1alpha1.ReasonRolloutComplete, casinov1alpha1.ReasonUnavailable, casinov1alpha1.ReasonMigrationSucceeded, metav1.ConditionFalse}},
		{"stuck rollout", observation{migration: succeeded, deployment: deploymentWith(2, appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet web-1 has timed out progressing."}}})},
			want{casinov1alpha1.ReasonRolloutStuck, casinov1alpha1.ReasonRolloutStuck, casinov1alpha1.ReasonRolloutStuck, casinov1alpha1.ReasonMigrationSucceeded, metav1.ConditionFalse}},
		{"available", observation{migration: succeeded, deployment: deploymentWith(2, available)},
			want{casinov1alpha1.ReasonAvailable, casinov1alpha1.ReasonRolloutComplete, casinov1alpha1.ReasonAsExpected, casinov1alpha1.ReasonMigrationSucceeded, metav1.ConditionTrue}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var st casinov1alpha1.CasinoStatus
			tt.obs.applyTo(&st, 7, t0, nil)
			check := func(ct casinov1alpha1.ConditionType, reason casinov1alpha1.ConditionReason) *metav1.Condition {
				c := meta.FindStatusCondition(st.Conditions, string(ct))
				if c == nil {
					t.Fatalf("no %s condition", ct)
				}
				if c.Reason != string(reason) || c.ObservedGeneration != 7 {
					t.Errorf("%s = %s/%s gen %d, want reason %s gen 7", ct, c.Status, c.Reason, c.ObservedGeneration, reason)
				}
				if !c.LastTransitionTime.Time.Equal(t0) {
					t.Errorf("%s lastTransitionTime = %v, want the reconciler's clock %v", ct, c.LastTransitionTime, t0)
				}
				return c
			}
			if r := check(casinov1alpha1.ConditionReady, tt.want.ready); r.Status != tt.want.readyStatus {
				t.Errorf("Ready = %s, want %s", r.Status, tt.want.readyStatus)
			}
			check(casinov1alpha1.ConditionProgressing, tt.want.progressing)
			check(casinov1alpha1.ConditionDegraded, tt.want.degraded)
			check(casinov1alpha1.ConditionMigrationsSucceeded, tt.want.migrated)
			ks, ok := kstatusWant[tt.name]
			if !ok {
				t.Fatalf("no kstatus expectation for %q", tt.name)
			}
			if c := check(casinov1alpha1.ConditionReconciling, ks.reconcilingReason); c.Status != ks.reconciling {
				t.Errorf("Reconciling = %s, want %s", c.Status, ks.reconciling)
			}
			if c := check(casinov1alpha1.ConditionStalled, ks.stalledReason); c.Status != ks.stalled {
				t.Errorf("Stalled = %s, want %s", c.Status, ks.stalled)
			}
			if st.ObservedGeneration != 7 {
				t.Errorf("observedGeneration = %d", st.ObservedGeneration)
			}
		})
	}
}

// kstatusWant is what kstatus (Helm 4's --wait, Flux, Argo CD) must read
// from each case of TestConditions: Stalled=True is "Failed" (a person must
// act), Reconciling=True is "InProgress", both False is "Current".
var kstatusWant = map[string]struct {
	reconciling, stalled             metav1.ConditionStatus
	reconcilingReason, stalledReason casinov1alpha1.ConditionReason
}{
	"missing secret dominates":            {metav1.ConditionFalse, metav1.ConditionTrue, casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonSecretNotFound},
	"missing secret with migrations done": {metav1.ConditionFalse, metav1.ConditionTrue, casinov1alpha1.ReasonSecretNotFound, casinov1alpha1.ReasonSecretNotFound},
	"migration running":                   {metav1.ConditionTrue, metav1.ConditionFalse, casinov1alpha1.ReasonMigrationRunning, casinov1alpha1.ReasonAsExpected},
	"migration failed":                    {metav1.ConditionFalse, metav1.ConditionTrue, casinov1alpha1.ReasonMigrationFailed, casinov1alpha1.ReasonMigrationFailed},
	"rolling out":                         {metav1.ConditionTrue, metav1.ConditionFalse, casinov1alpha1.ReasonRollingOut, casinov1alpha1.ReasonAsExpected},
	"generation not observed":             {metav1.ConditionTrue, metav1.ConditionFalse, casinov1alpha1.ReasonRollingOut, casinov1alpha1.ReasonAsExpected},
	"rolled out but unavailable":          {metav1.ConditionTrue, metav1.ConditionFalse, casinov1alpha1.ReasonUnavailable, casinov1alpha1.ReasonAsExpected},
	"stuck rollout":                       {metav1.ConditionFalse, metav1.ConditionTrue, casinov1alpha1.ReasonRolloutStuck, casinov1alpha1.ReasonRolloutStuck},
	"available":                           {metav1.ConditionFalse, metav1.ConditionFalse, casinov1alpha1.ReasonAvailable, casinov1alpha1.ReasonAsExpected},
}

func TestReconcileErrorMarksDegradedOnly(t *testing.T) {
	t.Parallel()
	st := casinov1alpha1.CasinoStatus{ObservedGeneration: 3}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(casinov1alpha1.ConditionReady), Status: metav1.ConditionTrue, Reason: "Available", ObservedGeneration: 3})
	(&observation{}).applyTo(&st, 4, t0, errors.New("apply Deployment web: boom"))
	deg := meta.FindStatusCondition(st.Conditions, string(casinov1alpha1.ConditionDegraded))
	if deg == nil || deg.Status != metav1.ConditionTrue || deg.Reason != string(casinov1alpha1.ReasonReconcileError) || deg.Message != "apply Deployment web: boom" {
		t.Fatalf("Degraded = %+v", deg)
	}
	if ready := meta.FindStatusCondition(st.Conditions, string(casinov1alpha1.ConditionReady)); ready.Status != metav1.ConditionTrue || st.ObservedGeneration != 3 {
		t.Fatalf("a failed reconcile rewrote the last complete observation: %+v gen %d", ready, st.ObservedGeneration)
	}
	// It is retried with back-off: in progress for kstatus, not Stalled.
	rec := meta.FindStatusCondition(st.Conditions, string(casinov1alpha1.ConditionReconciling))
	if rec == nil || rec.Status != metav1.ConditionTrue || rec.Reason != string(casinov1alpha1.ReasonReconcileError) {
		t.Fatalf("Reconciling = %+v", rec)
	}
	if stalled := meta.FindStatusCondition(st.Conditions, string(casinov1alpha1.ConditionStalled)); stalled != nil {
		t.Fatalf("a retried error set Stalled: %+v", stalled)
	}
}

// conflictingClient answers the first server-side apply of a Deployment
// with 409 Conflict, as the API server does when another writer won an
// optimistic-lock race.
type conflictingClient struct {
	client.Client
	conflicts *atomic.Int32
}

func (c conflictingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	// The reconciler applies unstructured objects (see apply), whose
	// wrapper exposes Unstructured's string getters.
	type named interface {
		GetKind() string
		GetName() string
	}
	u, ok := obj.(named)
	if !ok {
		return fmt.Errorf("conflictingClient: unexpected apply configuration %T", obj)
	}
	if u.GetKind() == "Deployment" && c.conflicts.Add(-1) >= 0 {
		return apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, u.GetName(), errors.New("the object has been modified"))
	}
	return c.Client.Apply(ctx, obj, opts...)
}

// TestConflictIsARequeueNotDegraded: a transient 409 from the API server
// requeues the Casino soon without an error, a Warning Event or any
// condition change (Degraded stays False, Reconciling follows progress);
// the next reconcile completes the work.
func TestConflictIsARequeueNotDegraded(t *testing.T) {
	t.Parallel()
	e := deployed(t, "conflict")
	before := e.casino("conflict")
	e.update("conflict", func(c *casinov1alpha1.Casino) { c.Spec.Replicas = ptr.To[int32](3) })

	conflicts := &atomic.Int32{}
	conflicts.Store(1)
	e.r.Client = conflictingClient{Client: k8sClient, conflicts: conflicts}
	res, err := e.r.Reconcile(e.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ns, Name: "conflict"}})
	if err != nil || res.RequeueAfter != conflictRequeueDelay {
		t.Fatalf("conflict: result %+v error %v, want a requeue after %v and no error", res, err, conflictRequeueDelay)
	}
	after := e.casino("conflict")
	if !equality.Semantic.DeepEqual(before.Status, after.Status) {
		t.Fatalf("a conflict changed the status:\n before %+v\n after  %+v", before.Status.Conditions, after.Status.Conditions)
	}
	if evs := e.drainEvents(); hasEvent(evs, eventReconcileError) {
		t.Fatalf("a conflict emitted a Warning: %q", evs)
	}

	e.reconcile("conflict")
	if d := e.deployment("conflict"); ptr.Deref(d.Spec.Replicas, 0) != 3 {
		t.Fatalf("the retried reconcile did not apply the spec: replicas %d", ptr.Deref(d.Spec.Replicas, 0))
	}
	e.expectCondition("conflict", casinov1alpha1.ConditionDegraded, metav1.ConditionFalse, casinov1alpha1.ReasonAsExpected)
	e.expectCondition("conflict", casinov1alpha1.ConditionReconciling, metav1.ConditionTrue, casinov1alpha1.ReasonRollingOut)
	e.expectCondition("conflict", casinov1alpha1.ConditionStalled, metav1.ConditionFalse, casinov1alpha1.ReasonAsExpected)
	e.markDeploymentAvailable("conflict")
	e.reconcile("conflict")
	e.expectCondition("conflict", casinov1alpha1.ConditionReconciling, metav1.ConditionFalse, casinov1alpha1.ReasonAvailable)
}

// TestPatchStatusSkipsNoOpAndLocks: the status helper writes nothing when
// the mutation changes nothing, patches when it does, and works from a
// fresh read even when the caller's copy is stale.
func TestPatchStatusSkipsNoOpAndLocks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("st", "registry.example/fairplay:v1")
	stale := e.casino("st")

	must(t, e.r.patchStatus(e.ctx, e.casino("st"), func(st *casinov1alpha1.CasinoStatus) { st.CurrentImage = "a" }))
	rv := e.casino("st").ResourceVersion
	if rv == stale.ResourceVersion {
		t.Fatal("a change was not written")
	}
	must(t, e.r.patchStatus(e.ctx, stale, func(st *casinov1alpha1.CasinoStatus) { st.CurrentImage = "a" }))
	if got := e.casino("st").ResourceVersion; got != rv {
		t.Fatalf("a no-op status write happened (resourceVersion %s -> %s)", rv, got)
	}
	if stale.Status.CurrentImage != "a" || stale.ResourceVersion != rv {
		t.Fatal("the caller's copy was not refreshed")
	}
	must(t, e.r.patchStatus(e.ctx, stale, func(st *casinov1alpha1.CasinoStatus) { st.CurrentImage = "b" }))
	if got := e.casino("st").Status.CurrentImage; got != "b" {
		t.Fatalf("currentImage = %q", got)
	}
}
