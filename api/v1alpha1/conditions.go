package v1alpha1

// ConditionType is the type of a Casino status condition.
type ConditionType string

// The condition types of a Casino. Each carries observedGeneration, a reason
// from the ConditionReason constants and a human-readable message, so that
// `kubectl wait --for=condition=Ready casino/NAME` works.
const (
	// ConditionReady is True when the Deployment runs spec.image with every
	// replica available: the Casino serves its spec.
	ConditionReady ConditionType = "Ready"
	// ConditionProgressing is True while the migrations of a new image run or
	// the Deployment rolls out.
	ConditionProgressing ConditionType = "Progressing"
	// ConditionDegraded is True when something needs a person: a failed
	// migration, a missing Secret, a stuck rollout or a reconcile error.
	ConditionDegraded ConditionType = "Degraded"
	// ConditionMigrationsSucceeded is True when the migrations of spec.image
	// have been applied.
	ConditionMigrationsSucceeded ConditionType = "MigrationsSucceeded"
	// ConditionLedgerAudit is True when the newest finished ledger audit
	// (spec.ledgerAudit) found no drift, False when it failed; absent while
	// no audit is configured or none has finished. It is not part of Ready:
	// a drift needs a person but does not stop the Casino serving.
	ConditionLedgerAudit ConditionType = "LedgerAudit"
	// ConditionReconciling is kstatus's abnormal-true "in progress"
	// condition: True while the Casino moves towards its spec (a migration
	// runs, the Deployment rolls out or its replicas are not all available
	// yet, or a reconcile error is retried with back-off). Helm 4's --wait,
	// Flux and Argo CD read it (with Stalled) to tell "wait" from "done".
	ConditionReconciling ConditionType = "Reconciling"
	// ConditionStalled is kstatus's abnormal-true "failed" condition: True
	// when the operator cannot make progress until a person changes something
	// (a failed migration, a missing Secret, a rollout past its progress
	// deadline), so tools waiting on the Casino report Failed instead of
	// waiting forever.
	ConditionStalled ConditionType = "Stalled"
)

// ConditionReason is the machine-readable reason of a Casino condition.
type ConditionReason string

// The reasons of the Casino conditions.
const (
	// ReasonAvailable: every replica of spec.image is available.
	ReasonAvailable ConditionReason = "Available"
	// ReasonRollingOut: the Deployment is rolling out.
	ReasonRollingOut ConditionReason = "RollingOut"
	// ReasonRolloutComplete: nothing is in progress.
	ReasonRolloutComplete ConditionReason = "RolloutComplete"
	// ReasonRolloutStuck: the Deployment exceeded its progress deadline.
	ReasonRolloutStuck ConditionReason = "RolloutStuck"
	// ReasonUnavailable: the rollout is done but replicas are not available.
	ReasonUnavailable ConditionReason = "Unavailable"
	// ReasonMigrationRunning: the migrations Job of spec.image runs.
	ReasonMigrationRunning ConditionReason = "MigrationRunning"
	// ReasonMigrationSucceeded: the migrations of spec.image are applied.
	ReasonMigrationSucceeded ConditionReason = "MigrationSucceeded"
	// ReasonMigrationFailed: the migrations Job of spec.image failed; the
	// Deployment keeps its previous image.
	ReasonMigrationFailed ConditionReason = "MigrationFailed"
	// ReasonSecretNotFound: a referenced Secret or key does not exist.
	ReasonSecretNotFound ConditionReason = "SecretNotFound"
	// ReasonReconcileError: the operator could not apply the spec (the
	// message says why; it retries with back-off).
	ReasonReconcileError ConditionReason = "ReconcileError"
	// ReasonLedgerVerified: the last ledger audit found no drift.
	ReasonLedgerVerified ConditionReason = "LedgerVerified"
	// ReasonLedgerAuditFailed: the last ledger audit Job failed: drift
	// between balances and the ledger, or the audit could not run (its
	// log says which).
	ReasonLedgerAuditFailed ConditionReason = "LedgerAuditFailed"
	// ReasonAsExpected: nothing is wrong (Degraded=False).
	ReasonAsExpected ConditionReason = "AsExpected"
)

// Annotations and labels the operator reads or writes.
const (
	// AnnotationRotateKeysAt on a Casino asks for a signing-key rotation: its
	// value is an RFC 3339 time (`date -u +%Y-%m-%dT%H:%M:%SZ`), like
	// `kubectl rollout restart`'s restartedAt. The operator adds a key when
	// the time is later than status.lastForcedRotation, records it there,
	// and never removes the annotation, so a GitOps tool that keeps it in
	// Git sees no drift and re-applying the same value rotates nothing.
	AnnotationRotateKeysAt = "casino.fairplay.dev/rotate-keys-at"
	// AnnotationRotateKeys is the earlier, imperative form of the request
	// (any value, removed by the operator). It is no longer honoured: the
	// operator emits a Warning Event naming AnnotationRotateKeysAt and
	// leaves the annotation alone.
	AnnotationRotateKeys = "casino.fairplay.dev/rotate-keys"
	// AnnotationLastForcedRotation on the signing-key Secret records the
	// rotate-keys-at time of the last forced rotation, written in the same
	// update as the key it added, so the request is honoured exactly once
	// even when the status write that follows fails or a stale cache
	// serves the Casino again.
	AnnotationLastForcedRotation = "casino.fairplay.dev/last-forced-rotation"
	// AnnotationCRDRevision on the Casino CRD is its schema's revision, a
	// whole number raised with every change of the generated CRD (the
	// +kubebuilder:metadata:annotations marker on Casino; a test in
	// cmd/operator pins each revision to its schema). The chart's upgrade
	// hook (operator apply-crds) leaves a CRD of a higher revision alone:
	// the CRD is cluster-wide, and an older chart upgraded in another
	// namespace must not take fields away from the newer releases' Casinos.
	AnnotationCRDRevision = "casino.fairplay.dev/crd-revision"
	// AnnotationImage on a migrations Job records the image it migrates.
	AnnotationImage = "casino.fairplay.dev/image"
	// LabelCasino on every owned object names its Casino.
	LabelCasino = "casino.fairplay.dev/casino"
)
