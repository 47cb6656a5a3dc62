// Package controller holds the Casino reconciler: one reconciler for the
// kind, split into files by concern (signing keys, migrations, Deployment,
// networking, status), each with its tests.
package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// FieldManager is the server-side-apply field manager of the operator.
const FieldManager = "fairplay-operator"

// conflictRequeueDelay is how soon a reconcile that lost an optimistic-lock
// race runs again: long enough for the cache to catch up with the write
// that won, short enough that nobody notices.
const conflictRequeueDelay = time.Second

// Labels every owned object carries.
const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelComponent = "app.kubernetes.io/component"
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelPartOf    = "app.kubernetes.io/part-of"

	// ManagedByValue is the app.kubernetes.io/managed-by label value of every
	// object the operator makes; the manager caches only Secrets with it.
	ManagedByValue = "fairplay-operator"

	componentServer     = "server"
	componentMigrations = "migrations"
	componentKeys       = "signing-keys"
	// componentLedgerAudit labels the ledger audit's CronJob, Jobs and pods.
	componentLedgerAudit = "ledger-audit"
)

// Event reasons (the condition reasons are API constants; these only name
// steps in `kubectl describe casino`).
const (
	eventSigningKeysCreated     = "SigningKeysCreated"
	eventSigningKeyRotated      = "SigningKeyRotated"
	eventSigningKeysPruned      = "SigningKeysPruned"
	eventMigrationStarted       = "MigrationStarted"
	eventMigrationSucceeded     = "MigrationSucceeded"
	eventMigrationFailed        = "MigrationFailed"
	eventForeignMigrationJob    = "ForeignMigrationJobDeleted"
	eventLedgerAuditIgnored     = "LedgerAuditJobsIgnored"
	eventDeploymentCreated      = "DeploymentCreated"
	eventRollingOut             = "RollingOut"
	eventAvailable              = "Available"
	eventSecretNotFound         = "SecretNotFound"
	eventServiceMonitorSkipped  = "ServiceMonitorSkipped"
	eventReconcileError         = "ReconcileError"
	eventMigrationJobsCollected = "MigrationJobsDeleted"
	eventInvalidRotationRequest = "InvalidRotationRequest"
	eventProxiesUnguarded       = "ProxiesUnguarded"
)

// CasinoReconciler keeps the objects of a Casino in shape: the signing-key
// Secret, the pods' ServiceAccount, the migrations Job of each image, the
// server Deployment, Service, Ingress, PodDisruptionBudget and
// ServiceMonitor, and the Casino's status.
type CasinoReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// APIReader reads straight from the API server: the Secrets the Casino
	// references (not cached: the cache holds only the operator's own
	// Secrets), the signing-key Secret and the Casino before a status patch.
	APIReader client.Reader
	// Scheme knows the owned kinds (for owner references).
	Scheme *runtime.Scheme
	// Recorder emits the Events shown by `kubectl describe casino`.
	Recorder events.EventRecorder
	// Clock decides key rotation; tests inject a fake one.
	Clock clock.PassiveClock

	// created holds the UIDs of the migration Jobs this operator created
	// since it started (types.UID → true): their results count whatever an
	// admission policy made of their pods (reconcileMigrations).
	created sync.Map
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=casino.fairplay.dev,resources=casinos,verbs=get;list;watch
// +kubebuilder:rbac:groups=casino.fairplay.dev,resources=casinos/finalizers,verbs=update
// +kubebuilder:rbac:groups=casino.fairplay.dev,resources=casinos/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=get;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete

// Reconcile brings one Casino's objects to its spec and records what it saw:
// signing keys first (the server cannot start without them), then the
// referenced Secrets, the network objects, the pods' ServiceAccount, the
// migrations Job of spec.image, the Deployment (which rolls only once that
// Job has succeeded), and last the status. It is idempotent: objects are
// server-side applied and the status patch is skipped when nothing changed.
func (r *CasinoReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)

	var casino casinov1alpha1.Casino
	if err := r.Get(ctx, req.NamespacedName, &casino); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Namespace, req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !casino.DeletionTimestamp.IsZero() {
		forgetMetrics(casino.Namespace, casino.Name)
		// Everything the Casino owns carries its owner reference, so the
		// garbage collector removes it; nothing to do here.
		return reconcile.Result{}, nil
	}

	obs, err := r.observe(ctx, &casino)
	if apierrors.IsConflict(err) {
		// Another writer changed an object between our read and our write
		// (often our own cache lagging behind our last write). That is the
		// optimistic lock doing its job, not a fault: start again from fresh
		// data without marking the Casino Degraded or emitting a Warning.
		log.V(1).Info("conflict, requeueing", "error", err.Error())
		return reconcile.Result{RequeueAfter: conflictRequeueDelay}, nil
	}
	if err != nil {
		log.Error(err, "reconcile casino")
		r.event(&casino, corev1.EventTypeWarning, eventReconcileError, "Reconcile", "%v", err)
	}
	previous := casino.Status.DeepCopy()
	if perr := r.patchStatus(ctx, &casino, func(st *casinov1alpha1.CasinoStatus) {
		obs.applyTo(st, casino.Generation, r.Clock.Now(), err)
	}); perr != nil {
		return reconcile.Result{}, errors.Join(err, perr)
	}
	recordMetrics(&casino)
	if err != nil {
		return reconcile.Result{}, err
	}
	if becameReady(previous, &casino.Status) {
		r.event(&casino, corev1.EventTypeNormal, eventAvailable, "Rollout", "Every replica of %s is available", casino.Spec.Image)
	}
	return reconcile.Result{RequeueAfter: obs.requeueAfter}, nil
}

// observe runs the steps in order and returns what they found. Each step
// returns an error only for API failures; conditions a person must fix
// (missing Secret, failed migration) are findings, not errors.
func (r *CasinoReconciler) observe(ctx context.Context, casino *casinov1alpha1.Casino) (*observation, error) {
	obs := &observation{desiredReplicas: desiredReplicas(casino)}

	keys, err := r.reconcileSigningKeys(ctx, casino)
	if err != nil {
		return obs, fmt.Errorf("signing keys: %w", err)
	}
	obs.keys = keys
	obs.requeueAfter = keys.requeueAfter

	obs.missingSecret, err = r.checkSecretRefs(ctx, casino)
	if err != nil {
		return obs, fmt.Errorf("referenced secrets: %w", err)
	}
	// The Service, Ingress, PodDisruptionBudget and ServiceMonitor do not
	// hold the roll up: one the API refuses (an Ingress whose host another
	// namespace's claims, a policy engine's veto) is reported, and retried,
	// after the migrations and the Deployment have had their turn, so a
	// broken Ingress cannot keep a fix from rolling out.
	netErr := r.reconcileNetwork(ctx, casino)
	err = r.observeRollout(ctx, casino, obs)
	if netErr != nil {
		err = errors.Join(fmt.Errorf("network: %w", netErr), err)
	}
	return obs, err
}

// observeRollout is observe's steps past the network objects: the pods'
// ServiceAccount, the migrations, the Deployment, the ledger audit and the
// cleanup, in order.
func (r *CasinoReconciler) observeRollout(ctx context.Context, casino *casinov1alpha1.Casino, obs *observation) error {
	// Before every step that makes pods: they name it.
	if err := r.reconcileServiceAccount(ctx, casino); err != nil {
		return fmt.Errorf("service account: %w", err)
	}
	current, err := r.currentDeployment(ctx, casino)
	if err != nil {
		return fmt.Errorf("read deployment: %w", err)
	}
	obs.migration, err = r.reconcileMigrations(ctx, casino, serverImage(current), obs.missingSecret == "")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	obs.requeueAfter = minPositive(obs.requeueAfter, obs.migration.requeueAfter)
	if obs.missingSecret != "" {
		// New pods would hang in CreateContainerConfigError: leave the
		// Deployment as it is and look again soon (user Secrets are not
		// watched).
		if prev := meta.FindStatusCondition(casino.Status.Conditions, string(casinov1alpha1.ConditionDegraded)); prev == nil ||
			prev.Reason != string(casinov1alpha1.ReasonSecretNotFound) || prev.Message != obs.missingSecret {
			r.event(casino, corev1.EventTypeWarning, eventSecretNotFound, "CheckSecrets", "%s", obs.missingSecret)
		}
		obs.deployment = current
		obs.audit.skipped = true
		obs.requeueAfter = minPositive(obs.requeueAfter, 30*time.Second)
		return nil
	}
	obs.deployment, err = r.reconcileDeployment(ctx, casino, current, obs.migration)
	if err != nil {
		return fmt.Errorf("deployment: %w", err)
	}
	obs.audit, err = r.reconcileLedgerAudit(ctx, casino, serverImage(obs.deployment))
	if err != nil {
		return fmt.Errorf("ledger audit: %w", err)
	}
	if obs.migration.phase == migrationSucceeded && serverImage(obs.deployment) == casino.Spec.Image {
		if err := r.deleteObsoleteMigrationJobs(ctx, casino, obs.migration.jobName); err != nil {
			return fmt.Errorf("migrations cleanup: %w", err)
		}
	}
	return nil
}

// SetupWithManager registers the reconciler: it watches Casinos (spec
// changes and annotations such as casino.fairplay.dev/rotate-keys-at) and every
// kind it owns. ServiceMonitors are not watched, so that the operator runs
// without the prometheus-operator CRDs; they are re-applied on each reconcile.
// Secrets are watched as metadata only: a deleted or edited signing-key
// Secret wakes the reconciler, which reads the keys themselves from the API
// server, so no Secret data is streamed to or held in the operator's cache.
func (r *CasinoReconciler) SetupWithManager(mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return builder.ControllerManagedBy(mgr).
		For(&casinov1alpha1.Casino{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&appsv1.Deployment{}).
		Owns(&batchv1.Job{}).
		// The audit's Jobs belong to the CronJob; its status (active Jobs,
		// last success) changes when one finishes, which wakes the Casino.
		Owns(&batchv1.CronJob{}).
		// ...but a Job started by hand (`kubectl create job --from=cronjob/...`)
		// or one the CronJob controller has forgotten changes no CronJob
		// status: map every ledger-audit Job to its Casino by label, so its
		// result reaches the LedgerAudit condition at once.
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(ledgerAuditJobToCasino)).
		Owns(&corev1.Secret{}, builder.OnlyMetadata).
		Owns(&corev1.Service{}).
		// A deleted ServiceAccount is made again at once: the pods of the
		// next roll or audit could not be created without it.
		Owns(&corev1.ServiceAccount{}).
		Owns(&networkingv1.Ingress{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Named("casino").
		Complete(r)
}

// ledgerAuditJobToCasino maps a ledger-audit Job to its Casino (from the
// labels every audit Job carries); other Jobs map to nothing.
func ledgerAuditJobToCasino(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[labelComponent] != componentLedgerAudit || l[labelManagedBy] != ManagedByValue || l[casinov1alpha1.LabelCasino] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: l[casinov1alpha1.LabelCasino]}}}
}

// CacheOptions are the manager's cache settings the reconciler relies on:
// of every kind it owns — Secrets (the signing keys), Deployments, Jobs,
// CronJobs, Services, ServiceAccounts, Ingresses, NetworkPolicies,
// PodDisruptionBudgets — only the objects labelled
// app.kubernetes.io/managed-by=fairplay-operator (every object it makes
// carries the label) are cached and watched, so a cluster's other
// Secrets are neither held in memory nor streamed to the operator. The
// label does not keep a tenant's objects out, though: anyone may write it
// on their own Jobs or Deployments. What bounds the memory a tenant can
// fill is the transform, trimForCache, which keeps of each object only the
// little the reconciler reads. Referenced Secrets are read through
// APIReader when needed; an object named like one of the operator's but
// made by someone else is not in the cache, and its owner is checked on the
// API server before any write.
//
// With watchNamespaces (the --watch-namespace flag of a namespaced install)
// every list and watch is limited to those namespaces, so the operator
// needs only Roles there; without them it watches the whole cluster and
// needs its ClusterRole.
func CacheOptions(watchNamespaces ...string) cache.Options {
	opts := cache.Options{
		// Nothing reads the cached objects' managedFields (the applies send
		// whole intents), which are often the larger part of an object. (The
		// owned kinds' transform, trimForCache, drops them too.)
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{},
	}
	ours := labels.SelectorFromSet(labels.Set{labelManagedBy: ManagedByValue})
	for _, obj := range ownedKinds() {
		opts.ByObject[obj] = cache.ByObject{Label: ours, Transform: trimForCache}
	}
	for _, ns := range watchNamespaces {
		if opts.DefaultNamespaces == nil {
			opts.DefaultNamespaces = map[string]cache.Config{}
		}
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	return opts
}

// ownedKinds are the kinds the reconciler makes, watches and reads from its
// cache (ServiceMonitors are read from the API server).
func ownedKinds() []client.Object {
	return []client.Object{&corev1.Secret{}, &appsv1.Deployment{}, &batchv1.Job{}, &batchv1.CronJob{},
		&corev1.Service{}, &corev1.ServiceAccount{}, &networkingv1.Ingress{}, &networkingv1.NetworkPolicy{},
		&policyv1.PodDisruptionBudget{}}
}

// ParseWatchNamespaces splits a --watch-namespace value (comma-separated
// namespaces; empty means all) into its namespaces.
func ParseWatchNamespaces(s string) []string {
	var out []string
	for ns := range strings.SplitSeq(s, ",") {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// event records an Event on the Casino when a recorder is set.
func (r *CasinoReconciler) event(casino *casinov1alpha1.Casino, eventType, reason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(casino, nil, eventType, reason, action, note, args...)
}

// apply server-side applies obj (a typed object built from the spec) with
// the operator as field owner, forcing ownership of the fields it sets: the
// object ends up as desired whatever drifted, and an unchanged object is not
// written (the API server skips no-op applies). The object is converted
// through its JSON form, which drops every omitempty zero value, then
// stripped of the two zero values JSON keeps (creationTimestamp: null and
// an empty status), so only fields the operator sets are claimed.
//
// An object of the same name the Casino does not control (someone else's
// Service, Ingress... in its namespace) is left alone: applying would take
// it over, rewrite it and make it the Casino's, to be deleted with it. The
// Casino reports it instead (errNotOurs).
func (r *CasinoReconciler) apply(ctx context.Context, owner *casinov1alpha1.Casino, obj client.Object) error {
	u, err := toUnstructured(obj, r.Scheme)
	if err != nil {
		return err
	}
	if owner != nil {
		if err := r.checkControlled(ctx, owner, u.GroupVersionKind(), client.ObjectKeyFromObject(obj)); err != nil {
			return err
		}
		if err := controllerutil.SetControllerReference(owner, u, r.Scheme); err != nil {
			return err
		}
	}
	if err := r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// errNotOurs is an object of the name the Casino needs that another owner
// (a person, another Casino, another controller) has: the Casino does not
// take it over.
type errNotOurs struct {
	kind, name string
}

func (e *errNotOurs) Error() string {
	return fmt.Sprintf("%s %s exists and does not belong to this Casino: rename the Casino or move the %s away",
		e.kind, e.name, e.kind)
}

// checkControlled reads the metadata of the object of kind gvk at key as the
// API server has it now (the cache may hold only the operator's own
// objects) and refuses one the Casino does not control (errNotOurs); an
// object that does not exist is fine.
func (r *CasinoReconciler) checkControlled(ctx context.Context, owner *casinov1alpha1.Casino, gvk schema.GroupVersionKind,
	key client.ObjectKey) error {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	err := r.APIReader.Get(ctx, key, m)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get %s %s: %w", gvk.Kind, key.Name, err)
	case !metav1.IsControlledBy(m, owner):
		return &errNotOurs{kind: gvk.Kind, name: key.Name}
	}
	return nil
}

// toUnstructured converts a typed object into the body of an apply request.
func toUnstructured(obj client.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", obj, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode %T: %w", obj, err)
	}
	delete(m, "status")
	stripCreationTimestamps(m)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// stripCreationTimestamps removes every metadata.creationTimestamp: null
// (object metadata and pod-template metadata).
func stripCreationTimestamps(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == "metadata" {
				if md, ok := child.(map[string]any); ok {
					if ts, ok := md["creationTimestamp"]; ok && ts == nil {
						delete(md, "creationTimestamp")
					}
				}
			}
			stripCreationTimestamps(child)
		}
	case []any:
		for _, child := range t {
			stripCreationTimestamps(child)
		}
	}
}

// labelsFor are the labels of every object owned by casino.
func labelsFor(casino *casinov1alpha1.Casino, component string) map[string]string {
	return map[string]string{
		labelName:                  "fairplay",
		labelInstance:              casino.Name,
		labelComponent:             component,
		labelManagedBy:             ManagedByValue,
		labelPartOf:                "fairplay",
		casinov1alpha1.LabelCasino: casino.Name,
	}
}

// selectorLabels select the server pods of casino (a Deployment's selector
// is immutable, so this set never changes).
func selectorLabels(casino *casinov1alpha1.Casino) map[string]string {
	return map[string]string{
		labelName:      "fairplay",
		labelInstance:  casino.Name,
		labelComponent: componentServer,
	}
}

func desiredReplicas(casino *casinov1alpha1.Casino) int32 {
	if casino.Spec.Replicas == nil {
		return 2 // the API default
	}
	return *casino.Spec.Replicas
}

// minPositive is the smaller of two durations, ignoring zeros.
func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	case a < b:
		return a
	default:
		return b
	}
}
