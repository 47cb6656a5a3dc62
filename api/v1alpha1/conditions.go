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
	// ReasonAsExpected: nothing is wrong (Degraded=False).
	ReasonAsExpected ConditionReason = "AsExpected"
)

// Annotations and labels the operator reads or writes.
const (
	// AnnotationRotateKeys on a Casino asks for a signing-key rotation now
	// (any value); the operator adds a key and removes the annotation.
	AnnotationRotateKeys = "casino.fairplay.dev/rotate-keys"
	// AnnotationImage on a migrations Job records the image it migrates.
	AnnotationImage = "casino.fairplay.dev/image"
	// LabelCasino on every owned object names its Casino.
	LabelCasino = "casino.fairplay.dev/casino"
)
