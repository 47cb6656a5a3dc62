//go:build cluster

package cluster_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/wallet"
)

// loadPlayers is how many players the load generator runs. The chart's
// default registration limit is 10 per IP and hour, and every request
// reaches the pods from the node's address: the smoke player and these stay
// under it.
const loadPlayers = 8

// runID makes this run's player names new (the database outlives an
// installation).
var runID = strconv.FormatInt(time.Now().Unix()%1e6, 36)

// TestFairplayOnARealNode is one installation's life, in order: each step
// needs the one before.
func TestFairplayOnARealNode(t *testing.T) {
	imageA, imageB := imageRepo+":"+tagA, imageRepo+":"+tagB
	var base string
	var players []*player

	step := func(name string, long bool, fn func(t *testing.T)) {
		if t.Failed() {
			return
		}
		if long && short {
			t.Logf("%s: skipped in the short form (FAIRPLAY_CLUSTER_SHORT)", name)
			return
		}
		if skip != nil && skip.MatchString(name) {
			t.Logf("%s: skipped (FAIRPLAY_CLUSTER_SKIP)", name)
			return
		}
		start := time.Now()
		t.Run(name, fn)
		t.Logf("%s: %s", name, time.Since(start).Round(time.Second))
	}

	step("README install", false, func(t *testing.T) {
		// A run left behind (FAIRPLAY_CLUSTER_KEEP) is removed first.
		if err := kube.Get(context.Background(), client.ObjectKey{Name: namespace}, &corev1.Namespace{}); err == nil {
			t.Logf("removing the previous run's namespace %s", namespace)
			_, _ = trySh("helm uninstall " + release + " -n " + namespace + " --wait --timeout 2m")
			sh(t, "kubectl delete namespace "+namespace+" --wait=true --timeout=3m")
		}
		for _, cmd := range readmeCommands(t) {
			cmd = asWritten(t, cmd, tagA)
			if strings.HasPrefix(cmd, "helm install") {
				restoreSigningKey(t, time.Now().Add(-2*time.Hour))
			}
			t.Logf("$ %s", cmd)
			t.Log(strings.TrimSpace(sh(t, cmd)))
		}
		var ns corev1.Namespace
		if err := kube.Get(context.Background(), client.ObjectKey{Name: namespace}, &ns); err != nil {
			t.Fatal(err)
		}
		if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
			t.Fatalf("namespace %s is not labelled pod-security.kubernetes.io/enforce=restricted: %v", namespace, ns.Labels)
		}
		waitReady(t, imageA, 5*time.Minute)
		c := getCasino(t)
		if c.Status.LastMigration == nil || c.Status.LastMigration.Image != imageA {
			t.Fatalf("lastMigration = %+v, want image %s", c.Status.LastMigration, imageA)
		}
		if ok, desc := jobSucceeded(t, c.Status.LastMigration.JobName); !ok {
			t.Fatalf("migration job %s: %s", c.Status.LastMigration.JobName, desc)
		}
		d := deployment(t)
		if d.Status.AvailableReplicas != *d.Spec.Replicas || d.Status.UpdatedReplicas != *d.Spec.Replicas {
			t.Fatalf("deployment: %d available, %d updated of %d", d.Status.AvailableReplicas, d.Status.UpdatedReplicas, *d.Spec.Replicas)
		}
		// The pods run as the Dockerfile says: user 65532, read-only root.
		var pods corev1.PodList
		if err := kube.List(context.Background(), &pods, client.InNamespace(namespace)); err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				continue
			}
			running++
			// The Casino's pods run as its own ServiceAccount, not the
			// namespace's default, and carry no token.
			if p.Labels["app.kubernetes.io/component"] == "server" {
				if p.Spec.ServiceAccountName != casinoName {
					t.Errorf("server pod %s runs as ServiceAccount %q, want the Casino's %q", p.Name, p.Spec.ServiceAccountName, casinoName)
				}
				for _, v := range p.Spec.Volumes {
					if v.Projected != nil {
						for _, src := range v.Projected.Sources {
							if src.ServiceAccountToken != nil {
								t.Errorf("server pod %s mounts a ServiceAccount token (volume %s)", p.Name, v.Name)
							}
						}
					}
				}
			}
			for _, ctr := range p.Spec.Containers {
				sc := ctr.SecurityContext
				if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
					t.Errorf("pod %s container %s: root filesystem is writable", p.Name, ctr.Name)
				}
			}
		}
		if running < 2 {
			t.Fatalf("%d pods running, want the operator and the servers", running)
		}
		// Isolation and spread by default. The node's bridge CNI does not
		// enforce NetworkPolicy, so this proves the policies are valid and
		// that everything in this suite works with them installed, not that
		// they block anything.
		var policies networkingv1.NetworkPolicyList
		if err := kube.List(context.Background(), &policies, client.InNamespace(namespace)); err != nil {
			t.Fatal(err)
		}
		// The chart's two (the operator's pods, the Casino's pods) and the
		// one the operator makes of the Casino's spec.networkPolicy.
		names := map[string]bool{}
		for _, np := range policies.Items {
			names[np.Name] = true
		}
		if len(policies.Items) != 3 || !names[casinoName+"-app"] || !names[casinoName] {
			t.Fatalf("NetworkPolicies in %s: %v, want the operator's, the Casino's and %s-app", namespace, names, casinoName)
		}
		for _, np := range policies.Items {
			t.Logf("NetworkPolicy %s: %d ingress, %d egress rules (installed; not enforced by this node's bridge CNI)", np.Name, len(np.Spec.Ingress), len(np.Spec.Egress))
		}
		if tsc := d.Spec.Template.Spec.TopologySpreadConstraints; len(tsc) != 2 {
			t.Fatalf("server pods' topologySpreadConstraints = %+v, want the hostname and zone defaults", tsc)
		}
		// Least privilege: the chart's default is the namespaced mode.
		as := " --as=system:serviceaccount:" + namespace + ":" + release + "-operator"
		for q, want := range map[string]string{
			"list secrets -A": "no", "list casinos.casino.fairplay.dev -A": "no",
			"get secrets -n " + namespace: "yes", "list secrets -n " + namespace: "yes",
		} {
			out, _ := trySh("kubectl auth can-i " + q + as)
			if got := strings.TrimSpace(out); got != want {
				t.Errorf("operator can-i %s: %q, want %s", q, got, want)
			}
		}
		// The server drains: its grace period covers the drain delay and
		// the shutdown timeout.
		pod := d.Spec.Template.Spec
		if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 30 {
			t.Errorf("terminationGracePeriodSeconds = %v, want the drain delay + shutdown timeout", g)
		}
		base = serviceURL(t)
		// kube-proxy programs a new Service within about a second.
		probe := &player{base: base, hc: &http.Client{Timeout: 2 * time.Second}}
		eventually(t, 30*time.Second, "the Service answers", func() (bool, string) {
			st, raw, err := probe.call(context.Background(), "GET", "/readyz", nil, nil)
			return err == nil && st == 200, fmt.Sprintf("%d %s %v", st, raw, err)
		})
		t.Logf("Service at %s", base)
	})

	step("a player registers, bets and cashes out through the Service", false, func(t *testing.T) {
		p := newPlayer(t, base, "smoke"+runID)
		p.register(t)
		var dice struct {
			BetID      string      `json:"betId"`
			NewBalance json.Number `json:"newBalance"`
		}
		p.mustCall(t, "POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}, &dice)
		if dice.BetID == "" {
			t.Fatal("dice: no betId")
		}
		cashed := false
		for round := 0; round < 25 && !cashed; round++ {
			var st struct {
				GameID string `json:"gameId"`
			}
			p.mustCall(t, "POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 1}, &st)
			var click struct {
				HitMine bool `json:"hitMine"`
			}
			p.mustCall(t, "POST", "/api/games/mines/click", map[string]any{"gameId": st.GameID, "row": 2, "col": 2}, &click)
			if click.HitMine {
				continue
			}
			var out struct {
				Success   bool        `json:"success"`
				WinAmount json.Number `json:"winAmount"`
			}
			p.mustCall(t, "POST", "/api/games/mines/cashout", map[string]any{"gameId": st.GameID}, &out)
			if !out.Success {
				t.Fatal("cashout: success false")
			}
			t.Logf("cashed out %s after %d rounds", out.WinAmount, round+1)
			cashed = true
		}
		if !cashed {
			t.Fatal("no safe first click in 25 one-mine rounds")
		}
		// Metrics are off the public path: the app's port does not serve
		// them; the Service's metrics port (for the scraper) does.
		if st, raw, err := p.call(context.Background(), "GET", "/metrics", nil, nil); err != nil || st == 200 && strings.Contains(string(raw), "# HELP") {
			t.Errorf("GET /metrics on the app's port: %d %.100s %v", st, raw, err)
		}
		metrics := &player{base: strings.Replace(base, ":80", ":9090", 1), hc: p.hc}
		if st, raw, err := metrics.call(context.Background(), "GET", "/metrics", nil, nil); err != nil || st != 200 || !strings.Contains(string(raw), "fairplay_") {
			t.Errorf("GET /metrics on the metrics port: %d %.100s %v", st, raw, err)
		}
		for i := range loadPlayers {
			lp := newPlayer(t, base, fmt.Sprintf("load%s%d", runID, i))
			lp.register(t)
			players = append(players, lp)
		}
	})

	step("a Redis outage keeps every endpoint ready", true, func(t *testing.T) {
		l := runLoad(players)
		defer l.finish()
		before := readyEndpoints(t)
		pid := clusterPID(t, "redis")
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		minReady := before
		for time.Since(stopped) < 15*time.Second {
			minReady = min(minReady, readyEndpoints(t))
			time.Sleep(time.Second)
		}
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		t.Logf("Redis stopped 15s: ready endpoints %d before, at least %d during; load: %s", before, minReady, l.summary())
		if minReady < before {
			t.Errorf("a Redis outage took endpoints out of the Service: %d of %d left", minReady, before)
		}
	})

	step("operator metrics: HTTPS, and only a token allowed to GET /metrics reads them", false, func(t *testing.T) {
		ip := strings.Trim(sh(t, "kubectl -n "+namespace+" get service "+release+"-operator-metrics -o jsonpath='{.spec.clusterIP}'"), "' \n")
		url := "https://" + ip + ":8443/metrics"
		get := func(token string) (int, string) {
			req, err := http.NewRequest(http.MethodGet, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			// The operator's certificate is self-signed (made in memory).
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed by design; the token check is what is tested
			resp, err := c.Do(req)
			if err != nil {
				return 0, err.Error()
			}
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		eventually(t, time.Minute, "operator metrics endpoint answering", func() (bool, string) {
			code, body := get("")
			return code == http.StatusUnauthorized, fmt.Sprintf("%d %.200s", code, body)
		})
		sh(t, "kubectl -n "+namespace+" create serviceaccount metrics-scraper")
		defer func() {
			_, _ = trySh("kubectl delete clusterrolebinding fairplay-test-metrics-reader --ignore-not-found")
			_, _ = trySh("kubectl -n " + namespace + " delete serviceaccount metrics-scraper --ignore-not-found")
		}()
		token := strings.TrimSpace(sh(t, "kubectl -n "+namespace+" create token metrics-scraper --duration=10m"))
		if code, body := get(token); code != http.StatusForbidden {
			t.Fatalf("a valid token without metrics-reader: %d %.200s, want 403", code, body)
		}
		sh(t, "kubectl create clusterrolebinding fairplay-test-metrics-reader --clusterrole="+release+"-operator-metrics-reader-"+namespace+
			" --serviceaccount="+namespace+":metrics-scraper")
		want := `fairplay_operator_casino_condition{casino="` + casinoName + `",namespace="` + namespace + `",status="True",type="Ready"} 1`
		var body string
		eventually(t, time.Minute, "metrics with the metrics-reader role", func() (bool, string) {
			var code int
			code, body = get(token)
			return code == http.StatusOK && strings.Contains(body, want), fmt.Sprintf("%d %.200s", code, body)
		})
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "fairplay_operator_") {
				t.Log(line)
			}
		}
	})

	step("helm upgrade under load: migrations gate the roll, nothing fails, nothing is lost", false, func(t *testing.T) {
		l := runLoad(players)
		time.Sleep(5 * time.Second)
		oldRS := currentReplicaSet(t)
		start := time.Now()
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values --set image.tag="+tagB)
		waitReady(t, imageB, 5*time.Minute)
		rolled := time.Since(start)
		time.Sleep(5 * time.Second)
		l.finish()
		t.Logf("roll %s -> %s took %s; load: %s", tagA, tagB, rolled.Round(time.Second), l.summary())
		l.assertNoFailures(t, "upgrade")
		c := getCasino(t)
		if c.Status.LastMigration == nil || c.Status.LastMigration.Image != imageB || c.Status.LastMigration.CompletionTime == nil {
			t.Fatalf("lastMigration = %+v, want a completed migration of %s", c.Status.LastMigration, imageB)
		}
		newRS := currentReplicaSet(t)
		if newRS.Name == oldRS.Name {
			t.Fatalf("the Deployment did not roll (ReplicaSet %s)", newRS.Name)
		}
		dumpCasino(t, "after-upgrade")
		if !expandApplied(t) {
			t.Error("B's expand-only migration (99990) is not in the database after the upgrade")
		}
		if newRS.CreationTimestamp.Before(c.Status.LastMigration.CompletionTime) {
			t.Errorf("the new ReplicaSet (%s) was made before the migration completed (%s)",
				newRS.CreationTimestamp, c.Status.LastMigration.CompletionTime)
		}
		checkAcks(t, l)
	})

	step("an upgrade whose migration fails: the old version keeps serving, Degraded with the Job's reason", true, func(t *testing.T) {
		l := runLoad(players)
		defer func() {
			if l != nil {
				l.finish()
			}
		}()
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values --set image.tag="+tagBroken)
		eventually(t, 5*time.Minute, "Degraded MigrationFailed", func() (bool, string) {
			c := getCasino(t)
			d := condition(c, casinov1alpha1.ConditionDegraded)
			if d == nil {
				return false, "no Degraded condition"
			}
			return d.Status == metav1.ConditionTrue && d.Reason == string(casinov1alpha1.ReasonMigrationFailed),
				fmt.Sprintf("Degraded=%s %s: %s", d.Status, d.Reason, d.Message)
		})
		c := getCasino(t)
		d := condition(c, casinov1alpha1.ConditionDegraded)
		t.Logf("Degraded: %s: %s", d.Reason, d.Message)
		if !strings.Contains(d.Message, "migrat") {
			t.Errorf("Degraded message does not name the migration: %q", d.Message)
		}
		// kstatus (Helm 4's --wait, Flux, Argo CD) must read Failed, not
		// keep waiting: Stalled=True with the Job's reason.
		if st := condition(c, casinov1alpha1.ConditionStalled); st == nil || st.Status != metav1.ConditionTrue || st.Reason != string(casinov1alpha1.ReasonMigrationFailed) {
			t.Errorf("Stalled = %+v, want True MigrationFailed", st)
		}
		if ks := kstatusOf(t, c); ks != kstatus.FailedStatus {
			t.Errorf("kstatus = %s, want Failed", ks)
		}
		dumpCasino(t, "after-failed-migration")
		if c.Status.CurrentImage != imageB {
			t.Errorf("currentImage = %s, want %s still serving", c.Status.CurrentImage, imageB)
		}
		dep := deployment(t)
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != imageB || dep.Status.AvailableReplicas != *dep.Spec.Replicas {
			t.Errorf("deployment: image %s, %d of %d available; want %s fully available", img, dep.Status.AvailableReplicas, *dep.Spec.Replicas, imageB)
		}
		time.Sleep(5 * time.Second)
		l.finish()
		t.Logf("load while the migration failed: %s", l.summary())
		l.assertNoFailures(t, "failed migration")
		checkAcks(t, l)
		l = nil
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values --set image.tag="+tagB)
		waitReady(t, imageB, 3*time.Minute)
		eventually(t, time.Minute, "Degraded cleared", func() (bool, string) {
			d := condition(getCasino(t), casinov1alpha1.ConditionDegraded)
			return d == nil || d.Status == metav1.ConditionFalse, fmt.Sprintf("%+v", d)
		})
	})

	step("rolling spec.image back across a migration: A serves on B's newer schema, under load, then forward again", true, func(t *testing.T) {
		if !expandApplied(t) {
			t.Fatal("B's expand-only migration is not applied: nothing to roll back across")
		}
		l := runLoad(players)
		time.Sleep(3 * time.Second)
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values --set image.tag="+tagA)
		waitReady(t, imageA, 5*time.Minute)
		time.Sleep(5 * time.Second)
		l.finish()
		t.Logf("rollback B -> A: %s", l.summary())
		l.assertNoFailures(t, "rollback")
		checkAcks(t, l)
		dumpCasino(t, "after-rollback")
		c := getCasino(t)
		if r := condition(c, casinov1alpha1.ConditionDegraded); r != nil && r.Status == metav1.ConditionTrue {
			t.Errorf("Degraded after the rollback: %s: %s", r.Reason, r.Message)
		}
		if !expandApplied(t) {
			t.Error("the rollback undid B's migration: migrations are forward-only")
		}
		// Forward again, so the steps after this one run B as before.
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values --set image.tag="+tagB)
		waitReady(t, imageB, 5*time.Minute)
	})

	step("scheduled signing-key rotation under load: no 401 for tokens in flight", true, func(t *testing.T) {
		l := runLoad(players)
		before := getCasino(t).Status.KeyIDs
		// The restored key is two hours old: an interval of one hour makes
		// it due now, and the operator's schedule (not the annotation)
		// rotates it.
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values --set casino.signingKeys.rotationInterval=1h")
		added := waitNewKey(t, before)
		out := sh(t, "kubectl -n "+namespace+" get events --field-selector reason=SigningKeyRotated -o jsonpath='{range .items[*]}{.note}{.message}{\"\\n\"}{end}'")
		if !strings.Contains(out, "rotation interval 1h0m0s elapsed") {
			t.Errorf("no SigningKeyRotated event for the interval: %q", out)
		}
		waitSignedWith(t, players[0], added)
		time.Sleep(10 * time.Second)
		l.finish()
		t.Logf("scheduled rotation %v -> %s; load: %s", before, added, l.summary())
		l.assertNoFailures(t, "scheduled key rotation")
	})

	step("forced signing-key rotation under load: no 401 for tokens in flight", true, func(t *testing.T) {
		l := runLoad(players)
		before := getCasino(t).Status.KeyIDs
		// The GitOps form: a timestamp annotation, like `kubectl rollout
		// restart`, which the operator compares with
		// status.lastForcedRotation and never removes.
		at := time.Now().UTC().Format(time.RFC3339)
		annotate := "kubectl -n " + namespace + " annotate casino/" + casinoName + " " + casinov1alpha1.AnnotationRotateKeysAt + "=" + at + " --overwrite"
		sh(t, annotate)
		added := waitNewKey(t, before)
		waitSignedWith(t, players[0], added)
		c := getCasino(t)
		if c.Annotations[casinov1alpha1.AnnotationRotateKeysAt] != at {
			t.Errorf("annotation %s = %q after the rotation, want %s left in place", casinov1alpha1.AnnotationRotateKeysAt, c.Annotations[casinov1alpha1.AnnotationRotateKeysAt], at)
		}
		if c.Status.LastForcedRotation == nil || c.Status.LastForcedRotation.UTC().Format(time.RFC3339) != at {
			t.Errorf("status.lastForcedRotation = %v, want %s", c.Status.LastForcedRotation, at)
		}
		dumpCasino(t, "after-forced-rotation")
		// Re-applying the same request (what a GitOps sync does) adds nothing.
		keys := c.Status.KeyIDs
		sh(t, annotate)
		sh(t, "kubectl -n "+namespace+" annotate casino/"+casinoName+" casino.fairplay.dev/touched="+at+" --overwrite")
		time.Sleep(10 * time.Second)
		l.finish()
		if after := getCasino(t).Status.KeyIDs; len(after) != len(keys) {
			t.Errorf("the same rotate-keys-at rotated again: %v -> %v", keys, after)
		}
		t.Logf("rotation %s -> %s; load: %s", before, added, l.summary())
		l.assertNoFailures(t, "key rotation")
	})

	step("drift is reverted: a hand-edited Deployment, a deleted Secret", true, func(t *testing.T) {
		ctx := context.Background()
		d := deployment(t)
		want := *d.Spec.Replicas
		sh(t, fmt.Sprintf("kubectl -n %s scale deployment/%s --replicas=%d", namespace, casinoName, want+3))
		eventually(t, time.Minute, "replicas reverted", func() (bool, string) {
			r := *deployment(t).Spec.Replicas
			return r == want, fmt.Sprintf("replicas %d", r)
		})
		// A hand edit of what the operator manages (server-side apply: the
		// fields it owns) is undone: the image and an environment value.
		// Fields it does not manage, such as an extra variable, stay.
		spec := getCasino(t).Spec.Image
		other := imageA
		if spec == imageA {
			other = imageB
		}
		ctr := deployment(t).Spec.Template.Spec.Containers[0].Name
		sh(t, "kubectl -n "+namespace+" set image deployment/"+casinoName+" "+ctr+"="+other)
		sh(t, "kubectl -n "+namespace+" set env deployment/"+casinoName+" FAIRPLAY_METRICS_ADDR=:9091")
		eventually(t, time.Minute, "image and env reverted", func() (bool, string) {
			c := deployment(t).Spec.Template.Spec.Containers[0]
			for _, e := range c.Env {
				if e.Name == "FAIRPLAY_METRICS_ADDR" && e.Value == ":9091" {
					return false, "FAIRPLAY_METRICS_ADDR=:9091 still set"
				}
			}
			return c.Image == spec, "image " + c.Image
		})
		waitReady(t, spec, 3*time.Minute)
		secretName := getCasino(t).Status.SigningKeysSecret
		var s corev1.Secret
		if err := kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &s); err != nil {
			t.Fatal(err)
		}
		oldUID := s.UID
		sh(t, "kubectl -n "+namespace+" delete secret "+secretName)
		eventually(t, time.Minute, "signing-key Secret recreated", func() (bool, string) {
			var s corev1.Secret
			err := kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &s)
			return err == nil && s.UID != oldUID && len(s.Data) > 0, fmt.Sprintf("%v", err)
		})
		waitReady(t, spec, 3*time.Minute)
	})

	step("the operator killed mid-roll is replaced and finishes the roll", true, func(t *testing.T) {
		tag, image := tagA, imageA
		if getCasino(t).Spec.Image == imageA {
			tag, image = tagB, imageB
		}
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values --set image.tag="+tag)
		eventually(t, 2*time.Minute, "the roll to "+image+" under way", func() (bool, string) {
			c := getCasino(t)
			p := condition(c, casinov1alpha1.ConditionProgressing)
			return p != nil && p.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", p)
		})
		out := sh(t, "kubectl -n "+namespace+" delete pod -l app.kubernetes.io/component=operator --wait=false")
		t.Log(strings.TrimSpace(out))
		waitReady(t, image, 5*time.Minute)
		for _, p := range players {
			p.token = ""
		}
	})

	step("ledger audit: the CronJob runs fairplay ledger verify in the cluster; a drift turns LedgerAudit False", true, func(t *testing.T) {
		ctx := context.Background()
		cronJob := casinoName + "-ledger-audit"
		sh(t, "kubectl -n "+namespace+" get cronjob "+cronJob)
		audit := func(job string, want metav1.ConditionStatus) *metav1.Condition {
			t.Helper()
			sh(t, "kubectl -n "+namespace+" create job "+job+" --from=cronjob/"+cronJob)
			var last *metav1.Condition
			eventually(t, 3*time.Minute, "LedgerAudit from "+job, func() (bool, string) {
				c := getCasino(t)
				last = condition(c, casinov1alpha1.ConditionLedgerAudit)
				if last == nil || c.Status.LastLedgerAudit == nil {
					return false, "no LedgerAudit yet"
				}
				return c.Status.LastLedgerAudit.JobName == job && last.Status == want,
					fmt.Sprintf("%s %s/%s: %s", c.Status.LastLedgerAudit.JobName, last.Status, last.Reason, last.Message)
			})
			t.Logf("%s: LedgerAudit=%s %s: %s", job, last.Status, last.Reason, last.Message)
			return last
		}
		audit("audit-clean", metav1.ConditionTrue)

		// Drift: one balance no longer equals the sum of its ledger entries.
		pool := adminPool(t)
		var id string
		if err := pool.QueryRow(ctx, "UPDATE users SET balance = balance + 1 WHERE id = (SELECT id FROM users ORDER BY id LIMIT 1) RETURNING id::text").Scan(&id); err != nil {
			t.Fatal(err)
		}
		restored := false
		restore := func() {
			if !restored {
				if _, err := pool.Exec(ctx, "UPDATE users SET balance = balance - 1 WHERE id::text = $1", id); err != nil {
					t.Errorf("restore balance of %s: %v", id, err)
				}
				restored = true
			}
		}
		defer restore()
		cond := audit("audit-drift", metav1.ConditionFalse)
		if cond.Reason != string(casinov1alpha1.ReasonLedgerAuditFailed) {
			t.Errorf("LedgerAudit reason %s, want %s", cond.Reason, casinov1alpha1.ReasonLedgerAuditFailed)
		}
		if logs := sh(t, "kubectl -n "+namespace+" logs job/audit-drift --tail=50 || true"); !strings.Contains(logs, "DRIFT") {
			t.Errorf("the audit's log does not report the drift: %q", logs)
		}
		if ready := condition(getCasino(t), casinov1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionTrue {
			t.Errorf("a ledger drift changed Ready: %+v", ready)
		}
		restore()
		audit("audit-fixed", metav1.ConditionTrue)
		verifyLedger(t)
	})

	step("helm upgrade of a chart whose CRD gained a field: the pre-upgrade hook applies it, no manual step", true, func(t *testing.T) {
		const crdName, field = "casinos.casino.fairplay.dev", "clusterTestField"
		chart := filepath.Join(t.TempDir(), "fairplay")
		sh(t, "cp -r charts/fairplay "+chart)
		addSpecField(t, filepath.Join(chart, "crds", "casino.fairplay.dev_casinos.yaml"), field)
		fieldType := "kubectl get crd " + crdName + " -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties." + field + ".type}'"
		if got := strings.TrimSpace(sh(t, fieldType)); got != "" {
			t.Fatalf("the installed CRD already has spec.%s (%q)", field, got)
		}
		t.Log(strings.TrimSpace(sh(t, "helm upgrade "+release+" "+chart+" -n "+namespace+" --reuse-values")))
		if got := strings.TrimSpace(sh(t, fieldType)); got != "string" {
			t.Fatalf("after helm upgrade: spec.%s type %q, want string (the hook did not apply the chart's CRD)", field, got)
		}
		casino := "kubectl -n " + namespace + " get casino/" + casinoName + " -o jsonpath='{.spec." + field + "}'"
		sh(t, "kubectl -n "+namespace+" patch casino/"+casinoName+" --type merge -p '{\"spec\":{\""+field+"\":\"kept\"}}'")
		if got := strings.TrimSpace(sh(t, casino)); got != "kept" {
			t.Fatalf("spec.%s = %q after the patch: the API server pruned the new field", field, got)
		}
		if left := strings.TrimSpace(sh(t, "kubectl -n "+namespace+" get jobs,configmaps,serviceaccounts -l app.kubernetes.io/component=crd-upgrade -o name")); left != "" {
			t.Errorf("the hook's objects outlived its success: %s", left)
		}
		// Back to the repository's chart: its CRD (without the field) is
		// applied the same way.
		sh(t, "kubectl -n "+namespace+" patch casino/"+casinoName+" --type merge -p '{\"spec\":{\""+field+"\":null}}'")
		sh(t, "helm upgrade "+release+" ./charts/fairplay -n "+namespace+" --reuse-values")
		if got := strings.TrimSpace(sh(t, fieldType)); got != "" {
			t.Fatalf("after upgrading back: spec.%s still in the CRD (%q)", field, got)
		}
		waitReady(t, getCasino(t).Spec.Image, 3*time.Minute)
	})

	step("helm uninstall removes everything but the database", false, func(t *testing.T) {
		ctx := context.Background()
		sh(t, "helm uninstall "+release+" -n "+namespace+" --wait --timeout 5m")
		eventually(t, 3*time.Minute, "the installation gone", func() (bool, string) {
			in := client.InNamespace(namespace)
			var left []string
			for _, l := range []struct {
				kind string
				list client.ObjectList
				opts []client.ListOption
			}{
				{"casino", &casinov1alpha1.CasinoList{}, []client.ListOption{in}},
				{"deployment", &appsv1.DeploymentList{}, []client.ListOption{in}},
				{"pod", &corev1.PodList{}, []client.ListOption{in}},
				{"service", &corev1.ServiceList{}, []client.ListOption{in}},
				{"job", &batchv1.JobList{}, []client.ListOption{in}},
				{"serviceaccount", &corev1.ServiceAccountList{}, []client.ListOption{in}},
				{"role", &rbacv1.RoleList{}, []client.ListOption{in}},
				{"clusterrole", &rbacv1.ClusterRoleList{}, []client.ListOption{client.MatchingLabels{"app.kubernetes.io/instance": release}}},
				{"secret", &corev1.SecretList{}, []client.ListOption{in}},
			} {
				if err := kube.List(ctx, l.list, l.opts...); err != nil {
					return false, err.Error()
				}
				_ = meta.EachListItem(l.list, func(o kruntime.Object) error {
					name := o.(client.Object).GetName()
					// The namespace's own ServiceAccount, and the Secrets
					// the README had the user create, are not the chart's.
					if name != "default" && name != "fairplay-db" && name != "fairplay-redis" {
						left = append(left, l.kind+"/"+name)
					}
					return nil
				})
			}
			return len(left) == 0, strings.Join(left, " ")
		})
		pool := adminPool(t)
		var users int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM users").Scan(&users); err != nil {
			t.Fatal(err)
		}
		if users < 1+loadPlayers {
			t.Fatalf("database has %d users after uninstall, want the %d players kept", users, 1+loadPlayers)
		}
		verifyLedger(t)
		sh(t, "kubectl delete namespace "+namespace+" --wait=true --timeout=2m")
	})
}

// runLoad starts the registered players playing.
func runLoad(players []*player) *load {
	l := &load{statuses: map[int]int{}, stop: make(chan struct{})}
	for i, p := range players {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.play(p, uint64(i))
		}()
	}
	return l
}

// currentReplicaSet is the Deployment's ReplicaSet with the highest
// revision.
func currentReplicaSet(t testing.TB) *appsv1.ReplicaSet {
	t.Helper()
	var list appsv1.ReplicaSetList
	if err := kube.List(context.Background(), &list, client.InNamespace(namespace),
		client.MatchingLabels{"app.kubernetes.io/component": "server"}); err != nil {
		t.Fatal(err)
	}
	var best *appsv1.ReplicaSet
	bestRev := -1
	for i := range list.Items {
		var rev int
		_, _ = fmt.Sscan(list.Items[i].Annotations["deployment.kubernetes.io/revision"], &rev)
		if rev > bestRev {
			best, bestRev = &list.Items[i], rev
		}
	}
	if best == nil {
		t.Fatal("no ReplicaSet of the server")
	}
	return best
}

func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), adminDBURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// expandApplied reports whether release B's expand-only migration
// (hack/testdata/99990_cluster_expand.sql) has run: its table exists and goose
// recorded the version.
func expandApplied(t testing.TB) bool {
	t.Helper()
	var table, recorded bool
	err := adminPool(t).QueryRow(context.Background(), `SELECT to_regclass('fairplay_cluster_expand') IS NOT NULL,
		EXISTS (SELECT 1 FROM goose_db_version WHERE version_id = 99990 AND is_applied)`).Scan(&table, &recorded)
	if err != nil {
		t.Fatalf("read the schema: %v", err)
	}
	return table && recorded
}

// checkAcks fails unless every bet the load got a 200 for is in the
// database, settled, with the payout it was answered, and the ledger
// audit is clean.
func checkAcks(t testing.TB, l *load) {
	t.Helper()
	ctx := context.Background()
	pool := adminPool(t)
	missing, wrong := 0, 0
	for _, a := range l.acks {
		var payout int64
		var status string
		err := pool.QueryRow(ctx, "SELECT payout, status FROM bets WHERE id = $1", a.id).Scan(&payout, &status)
		if err != nil {
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged bet %s: %v", a.id, err)
			}
			continue
		}
		want, err := money.Parse(a.payout.String())
		if err != nil || int64(want) != payout || status != "settled" {
			wrong++
			if wrong <= 5 {
				t.Errorf("bet %s: answered payout %s, stored %d (%s)", a.id, a.payout, payout, status)
			}
		}
	}
	t.Logf("%d acknowledged bets checked: %d missing, %d differ", len(l.acks), missing, wrong)
	verifyLedger(t)
}

// verifyLedger runs the ledger audit (`fairplay ledger verify`).
func verifyLedger(t testing.TB) {
	t.Helper()
	pool := adminPool(t)
	r, err := wallet.Verify(context.Background(), postgres.NewLedgerStore(pool))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Fatalf("ledger verify: %+v", r)
	}
}

// waitNewKey waits for a signing key that is not in before and returns
// its id.
func waitNewKey(t testing.TB, before []string) string {
	t.Helper()
	var added string
	eventually(t, 2*time.Minute, "a new signing key", func() (bool, string) {
		c := getCasino(t)
		for _, id := range c.Status.KeyIDs {
			if !slices.Contains(before, id) {
				added = id
			}
		}
		return added != "", fmt.Sprintf("keys %v", c.Status.KeyIDs)
	})
	return added
}

// waitSignedWith waits until new tokens are signed with kid: a key signs
// only once every replica can verify it (its activation delay), and until
// then tokens keep the old key. It renews p's tokens on the way.
func waitSignedWith(t testing.TB, p *player, kid string) {
	t.Helper()
	eventually(t, 6*time.Minute, "tokens signed with "+kid, func() (bool, string) {
		var out struct{ Token, RefreshToken string }
		st, raw, err := p.call(context.Background(), "POST", "/api/auth/refresh", map[string]any{"refreshToken": p.refreshToken}, &out)
		if err != nil || st != 200 {
			t.Fatalf("refresh: %d %s %v", st, raw, err)
		}
		p.token, p.refreshToken, p.tokenAt = out.Token, out.RefreshToken, time.Now()
		got := tokenKid(t, out.Token)
		return got == kid, "signed with " + got
	})
}

// restoreSigningKey creates the Casino's signing-key Secret with one key
// made at created, as restoring keys from a backup would: the operator
// adopts it. An old key lets the suite see a scheduled rotation without
// waiting an interval.
func restoreSigningKey(t testing.TB, created time.Time) {
	t.Helper()
	kid, pemBytes, err := accounts.GenerateKey(created.UTC())
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: casinoName + "-signing-keys"},
		Data: map[string][]byte{kid + ".pem": pemBytes}}
	if err := kube.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Logf("restored signing key %s", kid)
}

// tokenKid is the key id in an access token's header.
func tokenKid(t testing.TB, token string) string {
	t.Helper()
	head, _, _ := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatalf("token header: %v", err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("token header: %v", err)
	}
	return h.Kid
}

// addSpecField adds spec.<field> (a string) to the CRD manifest at path, as
// the next chart version's CRD would.
func addSpecField(t testing.TB, path, field string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	v0 := versions[0].(map[string]any)
	if err := unstructured.SetNestedField(v0, map[string]any{"type": "string"},
		"schema", "openAPIV3Schema", "properties", "spec", "properties", field); err != nil {
		t.Fatal(err)
	}
	versions[0] = v0
	if err := unstructured.SetNestedSlice(crd, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// dumpCasino logs, and keeps under .data/test/cluster-dumps/<when>.txt,
// `kubectl get casino -o wide` and the status summary as an operator on call
// reads it: `operator status` run by the operator's own binary in its pod
// (in-cluster credentials, the operator's RBAC).
func dumpCasino(t testing.TB, when string) {
	t.Helper()
	out := "$ kubectl -n " + namespace + " get casino -o wide\n" + sh(t, "kubectl -n "+namespace+" get casino -o wide") +
		"\n$ kubectl fairplay status (operator status, in the operator pod)\n" +
		sh(t, "kubectl -n "+namespace+" exec deploy/"+release+"-operator -c operator -- /operator status "+casinoName)
	t.Logf("%s:\n%s", when, out)
	dir := filepath.Join(repoRoot, ".data", "test", "cluster-dumps")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(dir, when+".txt"), []byte(out), 0o644)
	}
}
