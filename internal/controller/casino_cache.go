package controller

import (
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// cachedLabels are the labels the reconciler selects cached objects by (the
// Job lists, ledgerAuditJobToCasino); a cached object keeps only these.
var cachedLabels = []string{labelInstance, labelComponent, labelManagedBy, casinov1alpha1.LabelCasino}

var (
	casinoKind  = casinov1alpha1.GroupVersion.WithKind("Casino").GroupKind()
	cronJobKind = batchv1.SchemeGroupVersion.WithKind("CronJob").GroupKind()
)

// trimForCache is the cache's transform of every kind the reconciler owns
// (CacheOptions). The cache's label selector keeps out the objects without
// app.kubernetes.io/managed-by=fairplay-operator, but anyone who may create
// Deployments or Jobs in a namespace may write that label too, and the
// operator cached such objects whole: a tenant's labelled Deployments with
// 1.5 MiB of environment each filled a cluster-wide operator's 256 MiB with
// some hundred objects, and it went into an OOM loop that stopped every
// Casino's reconciling and key rotation (found by a review). So each object
// is cached as a new one holding only what the reconciler reads, all of it
// of bounded size:
//
//   - of the metadata: name, namespace, UID, resourceVersion, generation,
//     creation and deletion times, the controller reference (the owner
//     checks and the Owns watches read it) and the cachedLabels (a label
//     value has at most 63 characters); no annotations, other owners,
//     finalizers or managedFields;
//   - of the server Deployment (controlled by a Casino and named like it,
//     so one per Casino): replicas, selector, the server container's name
//     and image (currentDeployment, serverImage) and the status its
//     controller writes;
//   - of a Job controlled by a Casino (migrations) or a CronJob (audits):
//     the conditions and times of its status (jobFinished), which only the
//     Job controller writes, and its runFingerprint (a digest of what its
//     pod runs, by which runsAsBuilt judges its result), not the template;
//   - of everything else (CronJobs, Services, ServiceAccounts, Ingresses,
//     NetworkPolicies, PodDisruptionBudgets, Secrets, and objects no
//     Casino controls):
//     nothing more. The reconciler reads their owner and deletion only;
//     server-side apply sends whole intents and needs no cached spec.
//
// A trimmed object trims to itself, as client-go asks of a transform.
func trimForCache(in any) (any, error) {
	obj, ok := in.(client.Object)
	if !ok {
		return in, nil
	}
	ref := metav1.GetControllerOf(obj)
	var out client.Object
	var fp string // a Job's runFingerprint
	switch o := obj.(type) {
	case *appsv1.Deployment:
		d := &appsv1.Deployment{}
		if controlledByKind(ref, casinoKind) && ref.Name == o.Name {
			d.Spec.Replicas = o.Spec.Replicas
			d.Spec.Selector = o.Spec.Selector
			if c := serverImage(o); c != "" {
				d.Spec.Template.Spec.Containers = []corev1.Container{{Name: serverContainer, Image: c}}
			}
			d.Status = o.Status
		}
		out = d
	case *batchv1.Job:
		j := &batchv1.Job{}
		if controlledByKind(ref, casinoKind) || controlledByKind(ref, cronJobKind) {
			j.Status = batchv1.JobStatus{
				Conditions: o.Status.Conditions, StartTime: o.Status.StartTime, CompletionTime: o.Status.CompletionTime,
			}
			// Not the pod template but its fingerprint (runsAsBuilt), so a
			// Job's result is judged without reading it again: judged from
			// the API server, a tenant's thousand Jobs of the CronJob cost
			// every reconcile a thousand reads (found by a review).
			fp = jobRunFingerprint(o) // a trimmed Job keeps its own
		}
		out = j
	default:
		// A new, empty object of the same type (PartialObjectMetadata for
		// the Secrets, watched as metadata only).
		out, ok = reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
		if !ok {
			return in, nil
		}
	}
	out.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	out.SetName(obj.GetName())
	out.SetNamespace(obj.GetNamespace())
	out.SetUID(obj.GetUID())
	out.SetResourceVersion(obj.GetResourceVersion())
	out.SetGeneration(obj.GetGeneration())
	out.SetCreationTimestamp(obj.GetCreationTimestamp())
	out.SetDeletionTimestamp(obj.GetDeletionTimestamp())
	if ref != nil {
		out.SetOwnerReferences([]metav1.OwnerReference{*ref})
	}
	if fp != "" {
		out.SetAnnotations(map[string]string{cachedRunFingerprint: fp})
	}
	labels := map[string]string{}
	for k, v := range obj.GetLabels() {
		if slices.Contains(cachedLabels, k) {
			labels[k] = v
		}
	}
	if len(labels) > 0 {
		out.SetLabels(labels)
	}
	return out, nil
}

// cachedRunFingerprint is the annotation under which a cached Job carries
// its runFingerprint. The key is no valid annotation key (it has a space),
// so no object from the API server can carry it: only trimForCache writes
// it, on the copy the cache holds.
const cachedRunFingerprint = "fairplay.dev/run fingerprint"

// jobRunFingerprint is a Job's runFingerprint: the one trimForCache kept for
// a cached Job, or its spec's for one whole (read from the API server, or
// from a client without the cache).
func jobRunFingerprint(job *batchv1.Job) string {
	if fp, ok := job.Annotations[cachedRunFingerprint]; ok {
		return fp
	}
	return runFingerprint(&job.Spec)
}

// controlledByKind reports whether the controller reference ref (nil: none)
// names an owner of kind gk.
func controlledByKind(ref *metav1.OwnerReference, gk schema.GroupKind) bool {
	if ref == nil || ref.Kind != gk.Kind {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == gk.Group
}
