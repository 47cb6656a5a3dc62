package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// Limits of a migrations Job: a few retries for a database that blips, and a
// deadline so that a hung migration surfaces as Degraded instead of blocking
// the rollout forever.
const (
	migrationBackoffLimit     = 2
	migrationDeadlineSeconds  = 30 * 60
	migrationJobHashCharacter = 10
)

type migrationPhase string

const (
	migrationWaiting   migrationPhase = "Waiting"
	migrationRunning   migrationPhase = "Running"
	migrationSucceeded migrationPhase = "Succeeded"
	migrationFailed    migrationPhase = "Failed"
)

// migrationState is what the migrations step found for spec.image.
type migrationState struct {
	phase   migrationPhase
	image   string
	jobName string
	// message explains a failure (the Job's reason and message) or success.
	message string
	// record is the status.lastMigration to write; nil keeps the old one.
	record *casinov1alpha1.MigrationStatus
}

// migrationJobName is derived from a hash of the image, so each image gets
// exactly one Job, a re-applied spec finds it again, and deleting a failed
// Job is how a person retries the same image.
func migrationJobName(casino *casinov1alpha1.Casino) string {
	sum := sha256.Sum256([]byte(casino.Spec.Image))
	return fmt.Sprintf("%s-migrate-%s", casino.Name, hex.EncodeToString(sum[:])[:migrationJobHashCharacter])
}

// reconcileMigrations makes sure the migrations of spec.image have run
// before the Deployment may roll to it: it creates the image's Job if needed
// and reports its phase. runningImage is the image the Deployment runs now
// ("" when there is none). mayStart is false while a referenced Secret is
// missing: the Job's pod could not start, so none is created. Nothing here
// touches the Deployment.
func (r *CasinoReconciler) reconcileMigrations(ctx context.Context, casino *casinov1alpha1.Casino, runningImage string, mayStart bool) (migrationState, error) {
	image := casino.Spec.Image
	name := migrationJobName(casino)
	st := migrationState{image: image, jobName: name}

	if last := casino.Status.LastMigration; last != nil && last.Image == image {
		st.phase, st.jobName = migrationSucceeded, last.JobName
		st.message = fmt.Sprintf("Job %s applied the migrations of %s", last.JobName, image)
		return st, nil
	}
	if runningImage == image {
		// The Deployment already runs this image (its migrations ran before it
		// rolled, and only the record is missing): nothing to migrate.
		st.phase = migrationSucceeded
		st.message = fmt.Sprintf("%s is already running", image)
		return st, nil
	}

	var job batchv1.Job
	err := r.Get(ctx, types.NamespacedName{Namespace: casino.Namespace, Name: name}, &job)
	switch {
	case apierrors.IsNotFound(err) && !mayStart:
		st.phase = migrationWaiting
		st.message = fmt.Sprintf("The migrations of %s wait for the referenced Secrets", image)
		return st, nil
	case apierrors.IsNotFound(err):
		created := desiredMigrationJob(casino, name)
		if err := controllerutil.SetControllerReference(casino, created, r.Scheme); err != nil {
			return st, err
		}
		err := r.Create(ctx, created, client.FieldOwner(FieldManager))
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return st, fmt.Errorf("create job %s: %w", name, err)
			}
			r.event(casino, corev1.EventTypeNormal, eventMigrationStarted, "Migrate",
				"Created Job %s to migrate the database for %s", name, image)
			st.phase = migrationRunning
			st.message = migrationRunningMessage(name, image, runningImage)
			return st, nil
		}
		// Not in the cache, which holds only the operator's labelled
		// objects: one made by someone else, ours not cached yet, or ours
		// with its label taken off. The API server's copy is judged below
		// as a cached one would be.
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: casino.Namespace, Name: name}, &job); err != nil {
			return st, fmt.Errorf("get job %s: %w", name, err)
		}
	case err != nil:
		return st, fmt.Errorf("get job %s: %w", name, err)
	}
	if !metav1.IsControlledBy(&job, casino) {
		return st, fmt.Errorf("job %s exists and does not belong to this Casino", name)
	}

	switch done, cond := jobFinished(&job); {
	case done && cond.Type == batchv1.JobComplete:
		st.phase = migrationSucceeded
		st.message = fmt.Sprintf("Job %s applied the migrations of %s", name, image)
		st.record = &casinov1alpha1.MigrationStatus{Image: image, JobName: name, CompletionTime: job.Status.CompletionTime}
		if st.record.CompletionTime == nil {
			st.record.CompletionTime = &cond.LastTransitionTime
		}
		r.event(casino, corev1.EventTypeNormal, eventMigrationSucceeded, "Migrate",
			"Job %s succeeded; rolling out %s", name, image)
	case done:
		st.phase = migrationFailed
		st.message = fmt.Sprintf("Job %s failed (%s: %s); the Deployment keeps %s. Fix the image or the database and change spec.image, or delete the Job to retry",
			name, cond.Reason, cond.Message, orNone(runningImage))
		if prev := meta.FindStatusCondition(casino.Status.Conditions, string(casinov1alpha1.ConditionMigrationsSucceeded)); prev == nil || prev.Message != st.message {
			r.event(casino, corev1.EventTypeWarning, eventMigrationFailed, "Migrate", "%s", st.message)
		}
	default:
		st.phase = migrationRunning
		st.message = migrationRunningMessage(name, image, runningImage)
	}
	return st, nil
}

func migrationRunningMessage(job, image, running string) string {
	if running == "" {
		return fmt.Sprintf("Job %s is migrating the database for %s; the Deployment is created once it succeeds", job, image)
	}
	return fmt.Sprintf("Job %s is migrating the database for %s; the Deployment keeps %s until it succeeds", job, image, running)
}

func orNone(image string) string {
	if image == "" {
		return "no image (it is created once a migration succeeds)"
	}
	return image
}

// jobFinished reports whether the Job reached a terminal condition
// (Complete or Failed) and which.
func jobFinished(job *batchv1.Job) (bool, batchv1.JobCondition) {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c
		}
	}
	return false, batchv1.JobCondition{}
}

// desiredMigrationJob runs `fairplay migrate` with the new image under the
// same pod constraints as the server.
func desiredMigrationJob(casino *casinov1alpha1.Casino, name string) *batchv1.Job {
	labels := labelsFor(casino, componentMigrations)
	pod := basePodSpec(casino)
	pod.RestartPolicy = corev1.RestartPolicyNever
	pod.Containers = []corev1.Container{{
		Name:            "migrate",
		Image:           casino.Spec.Image,
		ImagePullPolicy: casino.Spec.ImagePullPolicy,
		Args:            []string{"migrate"},
		Env:             migrationEnv(casino),
		Resources:       containerResources(casino),
		SecurityContext: containerSecurityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
	}}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   casino.Namespace,
			Labels:      labels,
			Annotations: map[string]string{casinov1alpha1.AnnotationImage: casino.Spec.Image},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](migrationBackoffLimit),
			ActiveDeadlineSeconds: ptr.To[int64](migrationDeadlineSeconds),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: casino.Spec.PodAnnotations},
				Spec:       pod,
			},
		},
	}
}

// deleteObsoleteMigrationJobs removes the migrations Jobs of other images
// once spec.image runs; the current image's Job stays for its logs. A Job
// still running stays until it ends: spec.image set back while a newer
// image migrates (the way out of a stuck upgrade) must not stop its
// migrations part-way — they are expand-only, so the image set back runs on
// them whether they finish or not, and an index built concurrently for
// half an hour is not thrown away. Its end wakes the Casino (it owns the
// Job), which then deletes it.
func (r *CasinoReconciler) deleteObsoleteMigrationJobs(ctx context.Context, casino *casinov1alpha1.Casino, keep string) error {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(casino.Namespace),
		client.MatchingLabels{labelInstance: casino.Name, labelComponent: componentMigrations}); err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	var deleted []string
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.Name == keep || !metav1.IsControlledBy(job, casino) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if done, _ := jobFinished(job); !done {
			continue
		}
		if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete job %s: %w", job.Name, err)
		}
		deleted = append(deleted, job.Name)
	}
	if len(deleted) > 0 {
		r.event(casino, corev1.EventTypeNormal, eventMigrationJobsCollected, "Migrate",
			"Deleted the migrations Jobs of earlier images: %v", deleted)
	}
	return nil
}
