package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

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
	// requeueAfter asks for another look soon (a foreign Job was deleted
	// and its replacement is made next time); 0: no need.
	requeueAfter time.Duration
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
	key := types.NamespacedName{Namespace: casino.Namespace, Name: name}
	err := r.Get(ctx, key, &job)
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
			r.created.Store(created.UID, true)
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
		if err := r.APIReader.Get(ctx, key, &job); err != nil {
			return st, fmt.Errorf("get job %s: %w", name, err)
		}
	case err != nil:
		return st, fmt.Errorf("get job %s: %w", name, err)
	}
	if !metav1.IsControlledBy(&job, casino) {
		return st, fmt.Errorf("job %s exists and does not belong to this Casino", name)
	}

	// A finished Job's result counts if this operator created it (the UID
	// its create returned: an admission policy may have changed the pod, as
	// Kyverno's add-ndots does to every Job, and a tenant cannot give their
	// Job that UID) or if it ran the migrations this Casino builds
	// (runsAsBuilt). Judged by the pod alone, a policy's change made every
	// Job foreign, deleted and run again without end (found by a review);
	// an operator restarted while one ran still runs it once more.
	switch done, cond := jobFinished(&job); {
	case done && !r.createdJob(job.UID) && !runsAsBuilt(&job, &desiredMigrationJob(casino, name).Spec):
		return r.replaceForeignMigrationJob(ctx, casino, &job, st)
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

// replaceForeignMigrationJob deletes a finished migrations Job that did not
// run what desiredMigrationJob builds, without taking its result, and asks
// for the next look to create the Casino's own. Someone who may create Jobs
// in the namespace made it (under the image's Job name, with a controller
// reference to the Casino, which needs no right on the Casino), or changed
// the spec or the operator while it ran: either way nobody can say that it
// migrated the database for the image, and the migrations are safe to run
// again. A running one is left to finish first, as a migration must not be
// stopped part-way (deleteObsoleteMigrationJobs). The Warning names the
// Job; it repeats with every Job if a mutating admission policy changes a
// field runsAsBuilt compares.
func (r *CasinoReconciler) replaceForeignMigrationJob(ctx context.Context, casino *casinov1alpha1.Casino, job *batchv1.Job, st migrationState) (migrationState, error) {
	if job.DeletionTimestamp.IsZero() {
		if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(job.UID)}); client.IgnoreNotFound(err) != nil {
			return st, fmt.Errorf("delete job %s: %w", job.Name, err)
		}
		r.event(casino, corev1.EventTypeWarning, eventForeignMigrationJob, "Migrate",
			"Job %s did not run the migrations this Casino builds (someone else made or changed it, or the spec changed while it ran): deleted it without taking its result; a new Job migrates the database for %s",
			job.Name, st.image)
	}
	st.phase, st.requeueAfter = migrationRunning, conflictRequeueDelay
	st.message = fmt.Sprintf("Job %s did not run the migrations this Casino builds and is deleted; a new Job migrates the database for %s",
		job.Name, st.image)
	return st, nil
}

// runsAsBuilt reports whether job runs what the operator builds, want (the
// spec desiredMigrationJob or ledgerAuditJobSpec gives): whether their
// runFingerprints are the same; a Job from the cache carries its own
// (jobRunFingerprint). A
// controller reference to the Casino or its CronJob proves nothing: anyone
// who may create Jobs in the namespace can write one (the owner's UID is
// readable, and without blockOwnerDeletion no right on the owner is
// needed), and labels prove less. So a Job's result counts only if it ran
// the operator's pod. Found by a review playing a hostile tenant: a Job
// started from the audit CronJob with args ["version"] completed and hid a
// failed audit, and a Job made ahead under the migrations Job's name rolled
// the image onto an unmigrated database.
func runsAsBuilt(job *batchv1.Job, want *batchv1.JobSpec) bool {
	return jobRunFingerprint(job) == runFingerprint(want)
}

// runFingerprint is a digest of what decides what a Job's pod runs and
// when the Job counts as Complete: its containers (one; no init or
// ephemeral ones) with their image, command, arguments, working directory,
// environment (DATABASE_URL from the Casino's Secret, no envFrom) and
// mounts; its volumes and name resolution (host aliases, DNS and the host
// network could point the database's host at an empty database); one
// completion of a NonIndexed Job the Job controller runs (a Job of zero
// completions is Complete without a pod). What does not change what runs —
// resources, security context, scheduling, labels, the service account —
// is left out, so a policy that adds those still lets Jobs count. Fields
// are taken as the API server stores them (its defaults filled in).
func runFingerprint(spec *batchv1.JobSpec) string {
	type container struct {
		Name, Image, WorkingDir string
		Command                 []string               `json:",omitempty"`
		Args                    []string               `json:",omitempty"`
		Env                     []corev1.EnvVar        `json:",omitempty"`
		EnvFrom                 []corev1.EnvFromSource `json:",omitempty"`
		VolumeMounts            []corev1.VolumeMount   `json:",omitempty"`
		VolumeDevices           []corev1.VolumeDevice  `json:",omitempty"`
	}
	programs := func(cs []corev1.Container) []container {
		out := make([]container, len(cs))
		for i, c := range cs {
			out[i] = container{Name: c.Name, Image: c.Image, WorkingDir: c.WorkingDir, Command: c.Command, Args: c.Args,
				Env: defaultedEnv(c.Env), EnvFrom: c.EnvFrom, VolumeMounts: c.VolumeMounts, VolumeDevices: c.VolumeDevices}
		}
		return out
	}
	pod := &spec.Template.Spec
	raw, err := json.Marshal(struct {
		Completions      int32
		CompletionMode   batchv1.CompletionMode
		SuccessPolicy    *batchv1.SuccessPolicy
		ManagedBy        string
		Containers, Init []container
		Ephemeral        int
		Volumes          []corev1.Volume    `json:",omitempty"`
		HostAliases      []corev1.HostAlias `json:",omitempty"`
		DNSConfig        *corev1.PodDNSConfig
		DNSPolicy        corev1.DNSPolicy
		HostNetwork      bool
	}{
		Completions:    ptr.Deref(spec.Completions, 1),
		CompletionMode: ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion),
		SuccessPolicy:  spec.SuccessPolicy,
		ManagedBy:      ptr.Deref(spec.ManagedBy, batchv1.JobControllerName),
		Containers:     programs(pod.Containers),
		Init:           programs(pod.InitContainers),
		Ephemeral:      len(pod.EphemeralContainers),
		Volumes:        pod.Volumes,
		HostAliases:    pod.HostAliases,
		DNSConfig:      pod.DNSConfig,
		DNSPolicy:      dnsPolicy(pod),
		HostNetwork:    pod.HostNetwork,
	})
	if err != nil {
		// Only a value json cannot hold (none of these): nothing matches it.
		return "unmarshalable: " + err.Error()
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// defaultedEnv is env as the API server stores it: a fieldRef's apiVersion
// defaults to v1 (spec.env may leave it out), the one default of an
// environment variable.
func defaultedEnv(env []corev1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, len(env))
	for i, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.APIVersion == "" {
			e = *e.DeepCopy()
			e.ValueFrom.FieldRef.APIVersion = "v1"
		}
		out[i] = e
	}
	return out
}

// dnsPolicy is the pod's DNS policy with the API server's default.
func dnsPolicy(pod *corev1.PodSpec) corev1.DNSPolicy {
	if pod.DNSPolicy == "" {
		return corev1.DNSClusterFirst
	}
	return pod.DNSPolicy
}

// createdJob reports whether this operator created the Job of that UID
// (since it started).
func (r *CasinoReconciler) createdJob(uid types.UID) bool {
	_, ok := r.created.Load(uid)
	return ok
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
		Command:         []string{fairplayBinary},
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
			Completions:           ptr.To[int32](1),
			Parallelism:           ptr.To[int32](1),
			CompletionMode:        ptr.To(batchv1.NonIndexedCompletion),
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
