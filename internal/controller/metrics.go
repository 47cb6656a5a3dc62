package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// The operator's own metrics, served with controller-runtime's (reconcile
// counts and latencies, work queues, API client) on its metrics endpoint.
// They carry only what `kubectl get casino` shows: no Secret, no player data.
var (
	// CasinoCondition is 1 for each Casino condition's current status and 0
	// for the other two, like kube-state-metrics' *_status_condition, so
	// `fairplay_operator_casino_condition{type="Ready",status="True"} == 0`
	// finds a Casino that is not Ready.
	CasinoCondition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fairplay_operator_casino_condition",
		Help: "Status of each condition of each Casino: 1 for the current status (True, False or Unknown), 0 otherwise.",
	}, []string{"namespace", "casino", "type", "status"})

	// CasinoConditionReason is 1 for each condition's current reason, so an
	// alert can tell a failed migration (MigrationsSucceeded with reason
	// MigrationFailed) from one that is running.
	CasinoConditionReason = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fairplay_operator_casino_condition_reason",
		Help: "1 for the current reason of each condition of each Casino.",
	}, []string{"namespace", "casino", "type", "reason"})

	// LedgerAuditCompletion is when the newest ledger audit finished, per
	// result, so an alert can tell "failed" from "overdue".
	LedgerAuditCompletion = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fairplay_operator_ledger_audit_completion_timestamp_seconds",
		Help: "Unix time the newest finished ledger audit of each Casino completed; result is succeeded or failed.",
	}, []string{"namespace", "casino", "result"})

	// SigningKeyCreation is the creation time of each Casino's newest
	// signing key, for the "rotation overdue" alert.
	SigningKeyCreation = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fairplay_operator_signing_key_newest_timestamp_seconds",
		Help: "Unix time the newest access-token signing key of each Casino was created.",
	}, []string{"namespace", "casino"})

	// SigningKeyRotationInterval is spec.signingKeys.rotationInterval.
	SigningKeyRotationInterval = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fairplay_operator_signing_key_rotation_interval_seconds",
		Help: "The signing-key rotation interval of each Casino (spec.signingKeys.rotationInterval).",
	}, []string{"namespace", "casino"})
)

func init() {
	metrics.Registry.MustRegister(CasinoCondition, CasinoConditionReason, LedgerAuditCompletion, SigningKeyCreation, SigningKeyRotationInterval)
}

// conditionStatuses are the values a condition's status takes.
var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

// recordMetrics publishes casino's status as metrics. A condition the
// status no longer has (LedgerAudit when the audit is turned off) loses its
// series.
func recordMetrics(casino *casinov1alpha1.Casino) {
	ns, name := casino.Namespace, casino.Name
	CasinoCondition.DeletePartialMatch(prometheus.Labels{"namespace": ns, "casino": name})
	CasinoConditionReason.DeletePartialMatch(prometheus.Labels{"namespace": ns, "casino": name})
	for _, c := range casino.Status.Conditions {
		CasinoConditionReason.WithLabelValues(ns, name, c.Type, c.Reason).Set(1)
		for _, s := range conditionStatuses {
			v := 0.0
			if c.Status == s {
				v = 1
			}
			CasinoCondition.WithLabelValues(ns, name, c.Type, string(s)).Set(v)
		}
	}
	LedgerAuditCompletion.DeletePartialMatch(prometheus.Labels{"namespace": ns, "casino": name})
	if a := casino.Status.LastLedgerAudit; a != nil && a.CompletionTime != nil &&
		meta.FindStatusCondition(casino.Status.Conditions, string(casinov1alpha1.ConditionLedgerAudit)) != nil {
		result := "failed"
		if a.Succeeded {
			result = "succeeded"
		}
		LedgerAuditCompletion.WithLabelValues(ns, name, result).Set(float64(a.CompletionTime.Unix()))
	}
	if n := len(casino.Status.KeyIDs); n > 0 {
		if created, err := parseKeyID(casino.Status.KeyIDs[n-1]); err == nil {
			SigningKeyCreation.WithLabelValues(ns, name).Set(float64(created.Unix()))
		}
	}
	SigningKeyRotationInterval.WithLabelValues(ns, name).Set(rotationInterval(casino).Seconds())
}

// forgetMetrics drops every series of a Casino that is gone.
func forgetMetrics(namespace, name string) {
	l := prometheus.Labels{"namespace": namespace, "casino": name}
	CasinoCondition.DeletePartialMatch(l)
	CasinoConditionReason.DeletePartialMatch(l)
	LedgerAuditCompletion.DeletePartialMatch(l)
	SigningKeyCreation.DeletePartialMatch(l)
	SigningKeyRotationInterval.DeletePartialMatch(l)
}
