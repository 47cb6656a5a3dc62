package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// ServiceMonitorGVK is prometheus-operator's ServiceMonitor. The operator
// handles it as unstructured data, so it needs neither the prometheus-operator
// Go module nor its CRDs to run.
var ServiceMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}

// servicePort is the Service's port for the app (the Ingress routes to it
// by name); the Service's metrics port (metricsPort, for the
// ServiceMonitor) keeps the container's number.
const servicePort = 80

// reconcileNetwork applies the Service and the optional Ingress,
// PodDisruptionBudget and ServiceMonitor, deleting the optional ones the spec
// no longer asks for.
func (r *CasinoReconciler) reconcileNetwork(ctx context.Context, casino *casinov1alpha1.Casino) error {
	// Each object on its own: one the API refuses does not keep the others
	// from being written.
	var errs []error
	if err := r.apply(ctx, casino, desiredService(casino)); err != nil {
		errs = append(errs, err)
	}

	if ing := desiredIngress(casino); ing != nil {
		if err := r.apply(ctx, casino, ing); err != nil {
			errs = append(errs, err)
		}
	} else if err := r.deleteOwned(ctx, casino, &networkingv1.Ingress{}); err != nil {
		errs = append(errs, err)
	}

	if np := desiredNetworkPolicy(casino); np != nil {
		if err := r.apply(ctx, casino, np); err != nil {
			errs = append(errs, err)
		}
	} else if err := r.deleteOwnedNamed(ctx, casino, &networkingv1.NetworkPolicy{}, networkPolicyName(casino)); err != nil {
		errs = append(errs, err)
	}
	if trustsUnguardedProxies(casino) {
		r.event(casino, corev1.EventTypeWarning, eventProxiesUnguarded, "Reconcile",
			"spec.ingress without spec.networkPolicy: the server believes X-Forwarded-For from every private address range (%s), "+
				"so any pod that can reach its app port can name its own address for the per-address limits; set "+
				"spec.networkPolicy.appFrom to the Ingress controller's pods, or FAIRPLAY_TRUSTED_PROXIES in spec.env to its pod CIDR",
			IngressTrustedProxies)
	}

	if pdb := desiredPDB(casino); pdb != nil {
		if err := r.apply(ctx, casino, pdb); err != nil {
			errs = append(errs, err)
		}
	} else if err := r.deleteOwned(ctx, casino, &policyv1.PodDisruptionBudget{}); err != nil {
		errs = append(errs, err)
	}

	if err := r.reconcileServiceMonitor(ctx, casino); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// reconcileServiceMonitor applies or deletes the ServiceMonitor when the
// monitoring.coreos.com API is served; otherwise an enabled ServiceMonitor
// is skipped with a warning Event.
func (r *CasinoReconciler) reconcileServiceMonitor(ctx context.Context, casino *casinov1alpha1.Casino) error {
	installed, err := serviceMonitorInstalled(r.RESTMapper())
	if err != nil {
		return err
	}
	want := casino.Spec.ServiceMonitor != nil && casino.Spec.ServiceMonitor.Enabled
	switch {
	case !installed && want:
		r.event(casino, corev1.EventTypeWarning, eventServiceMonitorSkipped, "Monitor",
			"spec.serviceMonitor is enabled but the monitoring.coreos.com/v1 ServiceMonitor API is not installed")
		return nil
	case !installed:
		return nil
	case want:
		return r.apply(ctx, casino, desiredServiceMonitor(casino))
	default:
		sm := &unstructured.Unstructured{}
		sm.SetGroupVersionKind(ServiceMonitorGVK)
		return r.deleteOwned(ctx, casino, sm)
	}
}

// serviceMonitorInstalled asks the REST mapper (discovery) whether the
// cluster serves ServiceMonitors.
func serviceMonitorInstalled(mapper meta.RESTMapper) (bool, error) {
	_, err := mapper.RESTMapping(ServiceMonitorGVK.GroupKind(), ServiceMonitorGVK.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	default:
		return false, fmt.Errorf("discover %s: %w", ServiceMonitorGVK, err)
	}
}

// deleteOwned deletes the object named like the Casino of obj's kind when the
// Casino controls it (an object someone else made is left alone).
func (r *CasinoReconciler) deleteOwned(ctx context.Context, casino *casinov1alpha1.Casino, obj client.Object) error {
	return r.deleteOwnedNamed(ctx, casino, obj, casino.Name)
}

// deleteOwnedNamed is deleteOwned for an object of another name.
func (r *CasinoReconciler) deleteOwnedNamed(ctx context.Context, casino *casinov1alpha1.Casino, obj client.Object, name string) error {
	key := types.NamespacedName{Namespace: casino.Namespace, Name: name}
	var err error
	if _, ok := obj.(*unstructured.Unstructured); ok {
		err = r.APIReader.Get(ctx, key, obj) // not cached: ServiceMonitors are not watched
	} else {
		err = r.Get(ctx, key, obj)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %T %s: %w", obj, key.Name, err)
	}
	if !metav1.IsControlledBy(obj, casino) || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if err := r.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %T %s: %w", obj, key.Name, err)
	}
	return nil
}

func desiredService(casino *casinov1alpha1.Casino) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: casino.Name, Namespace: casino.Namespace, Labels: labelsFor(casino, componentServer)},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selectorLabels(casino),
			Ports: []corev1.ServicePort{{
				Name:       serverPortName,
				Port:       servicePort,
				TargetPort: intstr.FromString(serverPortName),
				Protocol:   corev1.ProtocolTCP,
			}, {
				Name:       metricsPortName,
				Port:       metricsPort,
				TargetPort: intstr.FromString(metricsPortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// desiredIngress routes spec.ingress.host to the Service's app port (never
// its metrics port); nil when unset.
func desiredIngress(casino *casinov1alpha1.Casino) *networkingv1.Ingress {
	spec := casino.Spec.Ingress
	if spec == nil {
		return nil
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Name: casino.Name, Namespace: casino.Namespace,
			Labels: labelsFor(casino, componentServer), Annotations: maps.Clone(spec.Annotations),
		},
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{
				Host: spec.Host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     "/",
						PathType: ptr.To(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: casino.Name, Port: networkingv1.ServiceBackendPort{Name: serverPortName},
						}},
					}},
				}},
			}},
		},
	}
	if spec.ClassName != "" {
		ing.Spec.IngressClassName = ptr.To(spec.ClassName)
	}
	if spec.TLSSecretName != "" {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{spec.Host}, SecretName: spec.TLSSecretName}}
	}
	return ing
}

// networkPolicyName is the name of the Casino's NetworkPolicy: not the
// Casino's own, which the chart's policy for its Casino has.
func networkPolicyName(casino *casinov1alpha1.Casino) string { return casino.Name + "-app" }

// desiredNetworkPolicy admits the server pods' app port only from
// spec.networkPolicy.appFrom (the peers whose X-Forwarded-For the server
// believes behind an Ingress: IngressTrustedProxies) and their metrics port
// only from metricsFrom, or from every source when it is empty, as without a
// policy; nil without spec.networkPolicy.
func desiredNetworkPolicy(casino *casinov1alpha1.Casino) *networkingv1.NetworkPolicy {
	spec := casino.Spec.NetworkPolicy
	if spec == nil {
		return nil
	}
	tcp := ptr.To(corev1.ProtocolTCP)
	port := func(name string) []networkingv1.NetworkPolicyPort {
		return []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromString(name))}}
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: networkPolicyName(casino), Namespace: casino.Namespace,
			Labels: labelsFor(casino, componentServer)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selectorLabels(casino)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{
				{From: slices.Clone(spec.AppFrom), Ports: port(serverPortName)},
				{From: slices.Clone(spec.MetricsFrom), Ports: port(metricsPortName)},
			},
		},
	}
}

// trustsUnguardedProxies reports a Casino whose server believes
// X-Forwarded-For from every private range (an Ingress, and
// FAIRPLAY_TRUSTED_PROXIES not set in spec.env) with no policy of its own
// saying who may reach the app port.
func trustsUnguardedProxies(casino *casinov1alpha1.Casino) bool {
	if casino.Spec.Ingress == nil || casino.Spec.NetworkPolicy != nil {
		return false
	}
	for _, e := range casino.Spec.Env {
		if e.Name == "FAIRPLAY_TRUSTED_PROXIES" {
			return false
		}
	}
	return true
}

// desiredPDB keeps all but one server pod through voluntary disruptions
// (node drains); nil with a single replica, where a PDB would block drains.
func desiredPDB(casino *casinov1alpha1.Casino) *policyv1.PodDisruptionBudget {
	if desiredReplicas(casino) <= 1 {
		return nil
	}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: casino.Name, Namespace: casino.Namespace, Labels: labelsFor(casino, componentServer)},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable:             ptr.To(intstr.FromInt32(1)),
			Selector:                   &metav1.LabelSelector{MatchLabels: selectorLabels(casino)},
			UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow),
		},
	}
}

// desiredServiceMonitor scrapes /metrics of the Service's metrics port (the
// app's port answers /metrics with 404).
func desiredServiceMonitor(casino *casinov1alpha1.Casino) *unstructured.Unstructured {
	spec := casino.Spec.ServiceMonitor
	labels := map[string]any{}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	for k, v := range labelsFor(casino, componentServer) {
		labels[k] = v
	}
	selector := map[string]any{}
	for k, v := range selectorLabels(casino) {
		selector[k] = v
	}
	interval := spec.Interval
	if interval == "" {
		interval = "30s"
	}
	sm := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": casino.Name, "namespace": casino.Namespace, "labels": labels},
		"spec": map[string]any{
			"selector":          map[string]any{"matchLabels": selector},
			"namespaceSelector": map[string]any{"matchNames": []any{casino.Namespace}},
			"endpoints": []any{map[string]any{
				"port": metricsPortName, "path": "/metrics", "interval": interval, "scheme": "http",
			}},
		},
	}}
	sm.SetGroupVersionKind(ServiceMonitorGVK)
	return sm
}
