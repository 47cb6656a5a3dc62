package controller

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
	"github.com/fairplay/fairplay/internal/accounts"
)

func keyAt(t *testing.T, at time.Time) signingKey {
	t.Helper()
	kid, pemBytes, err := accounts.GenerateKey(at)
	must(t, err)
	return signingKey{id: kid, created: at.UTC().Truncate(time.Second), pem: pemBytes}
}

func keyIDs(keys []signingKey) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.id)
	}
	return out
}

func TestPlanKeys(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	k0 := keyAt(t, t0)
	k1 := keyAt(t, t0.Add(day))
	k2 := keyAt(t, t0.Add(2*day))
	tests := []struct {
		name       string
		keys       []signingKey
		now        time.Time
		force      bool
		wantRotate bool
		wantKeep   []string
		wantPruned []string
		wantNext   time.Time
		wantWake   time.Duration
	}{
		{name: "no keys: make one", keys: nil, now: t0, wantRotate: true, wantKeep: nil},
		{name: "young key: nothing to do", keys: []signingKey{k0}, now: t0.Add(time.Hour),
			wantKeep: []string{k0.id}, wantNext: t0.Add(day), wantWake: 23 * time.Hour},
		{name: "interval elapsed: rotate, keep the old key", keys: []signingKey{k0}, now: t0.Add(day),
			wantRotate: true, wantKeep: []string{k0.id}, wantNext: t0.Add(day), wantWake: time.Second},
		{name: "forced rotation of a young key", keys: []signingKey{k0}, now: t0.Add(time.Minute), force: true,
			wantRotate: true, wantKeep: []string{k0.id}, wantNext: t0.Add(day), wantWake: day - time.Minute},
		{name: "successor younger than the grace: keep both", keys: []signingKey{k0, k1}, now: t0.Add(day + 29*time.Minute),
			wantKeep: []string{k0.id, k1.id}, wantNext: t0.Add(2 * day), wantWake: time.Minute},
		{name: "successor reached the grace: retire the old key", keys: []signingKey{k0, k1}, now: t0.Add(day + KeyRetirementGrace),
			wantKeep: []string{k1.id}, wantPruned: []string{k0.id}, wantNext: t0.Add(2 * day), wantWake: day - KeyRetirementGrace},
		{name: "operator was down for days: keep only the newest", keys: []signingKey{k0, k1, k2}, now: t0.Add(5 * day),
			wantRotate: true, wantKeep: []string{k2.id}, wantPruned: []string{k0.id, k1.id}, wantNext: t0.Add(3 * day), wantWake: time.Second},
		{name: "two young keys stay with their elder", keys: []signingKey{k0, k1, k2}, now: t0.Add(2*day + time.Minute),
			wantKeep: []string{k1.id, k2.id}, wantPruned: []string{k0.id}, wantNext: t0.Add(3 * day), wantWake: KeyRetirementGrace - time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := planKeys(tt.keys, tt.now, day, tt.force)
			if p.rotate != tt.wantRotate {
				t.Errorf("rotate = %v, want %v", p.rotate, tt.wantRotate)
			}
			if got := keyIDs(p.keep); !slices.Equal(got, tt.wantKeep) {
				t.Errorf("keep = %v, want %v", got, tt.wantKeep)
			}
			if !slices.Equal(p.pruned, tt.wantPruned) {
				t.Errorf("pruned = %v, want %v", p.pruned, tt.wantPruned)
			}
			if len(tt.keys) > 0 && !p.nextRotation.Equal(tt.wantNext) {
				t.Errorf("nextRotation = %v, want %v", p.nextRotation, tt.wantNext)
			}
			if len(tt.keys) > 0 && p.requeueAfter != tt.wantWake {
				t.Errorf("requeueAfter = %v, want %v", p.requeueAfter, tt.wantWake)
			}
		})
	}
}

func TestPlanKeysNewKeyIDsStayOrdered(t *testing.T) {
	t.Parallel()
	// Two forced rotations within one second must still give a newer key id.
	k := keyAt(t, t0)
	p := planKeys([]signingKey{k}, t0.Add(300*time.Millisecond), time.Hour, true)
	if !p.newKeyTime.After(k.created) {
		t.Fatalf("new key time %v is not after %v", p.newKeyTime, k.created)
	}
	if id := p.newKeyTime.Format(accounts.KeyIDFormat); id <= k.id {
		t.Fatalf("new key id %s does not sort after %s", id, k.id)
	}
}

func TestParseSigningKeysDropsWhatTheServerCannotLoad(t *testing.T) {
	t.Parallel()
	good := keyAt(t, t0)
	older := keyAt(t, t0.Add(-time.Hour))
	data := map[string][]byte{
		good.id + ".pem":       good.pem,
		older.id + ".pem":      older.pem,
		"not-a-time.pem":       good.pem,
		good.id + ".txt":       good.pem,
		"20260101T000000Z.pem": []byte("garbage"),
		"20260101T000001Z.pem": []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
		"..data":               nil,
		"xxxxx":                nil,
	}
	keys, dropped := parseSigningKeys(data)
	if got := keyIDs(keys); !slices.Equal(got, []string{older.id, good.id}) {
		t.Fatalf("keys = %v, want [%s %s] oldest first", got, older.id, good.id)
	}
	if dropped != 6 {
		t.Fatalf("dropped = %d, want 6", dropped)
	}
}

// TestSigningKeyRotation drives the key Secret through one rotation with
// the fake clock: one key at creation, a second after the interval, both
// kept for KeyRetirementGrace, then the first retired. It logs the Casino as
// `kubectl describe` would show it after the rotation.
func TestSigningKeyRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	const interval = 6 * time.Hour
	e.newCasino("rot", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.SigningKeys.RotationInterval = &metav1.Duration{Duration: interval}
	})
	secretKeys := func() []string {
		var s corev1.Secret
		if !e.get("rot-signing-keys", &s) {
			t.Fatal("signing-key secret missing")
		}
		keys, dropped := parseSigningKeys(s.Data)
		if dropped != 0 {
			t.Fatalf("secret holds %d entries the server cannot load", dropped)
		}
		return keyIDs(keys)
	}

	res := e.reconcile("rot")
	first := secretKeys()
	if len(first) != 1 || first[0] != t0.Format(accounts.KeyIDFormat) {
		t.Fatalf("keys after creation = %v", first)
	}
	if res.RequeueAfter != interval {
		t.Fatalf("RequeueAfter = %v, want %v", res.RequeueAfter, interval)
	}
	e.finishJob(migrationJobName(e.casino("rot")), true)
	e.reconcile("rot")
	e.markDeploymentAvailable("rot")
	e.reconcile("rot")
	history := e.drainEvents()

	// Just before the interval: nothing changes.
	e.clock.SetTime(t0.Add(interval - time.Second))
	e.reconcile("rot")
	if got := secretKeys(); !slices.Equal(got, first) {
		t.Fatalf("keys rotated early: %v", got)
	}

	// At the interval: a second key, the first still verifies.
	e.clock.SetTime(t0.Add(interval))
	res = e.reconcile("rot")
	second := t0.Add(interval).Format(accounts.KeyIDFormat)
	if got := secretKeys(); !slices.Equal(got, []string{first[0], second}) {
		t.Fatalf("keys after rotation = %v, want [%s %s]", got, first[0], second)
	}
	if res.RequeueAfter != KeyRetirementGrace {
		t.Fatalf("RequeueAfter = %v, want the retirement of the old key in %v", res.RequeueAfter, KeyRetirementGrace)
	}
	c := e.casino("rot")
	if c.Status.ActiveKeyID != second || !slices.Equal(c.Status.KeyIDs, []string{first[0], second}) ||
		!c.Status.NextRotation.Time.Equal(t0.Add(2*interval)) {
		t.Fatalf("status after rotation: active %s keys %v next %v", c.Status.ActiveKeyID, c.Status.KeyIDs, c.Status.NextRotation)
	}
	evs := e.drainEvents()
	if !hasEvent(evs, eventSigningKeyRotated) {
		t.Fatalf("no %s event: %q", eventSigningKeyRotated, evs)
	}
	// The rotation does not disturb the rest: still Ready, same Deployment.
	e.expectCondition("rot", casinov1alpha1.ConditionReady, metav1.ConditionTrue, casinov1alpha1.ReasonAvailable)
	logDescribe(t, e, "rot", append(history, evs...))

	// One second before the grace ends both keys stay; at the grace the first goes.
	e.clock.SetTime(t0.Add(interval + KeyRetirementGrace - time.Second))
	e.reconcile("rot")
	if got := secretKeys(); len(got) != 2 {
		t.Fatalf("old key retired early: %v", got)
	}
	e.clock.SetTime(t0.Add(interval + KeyRetirementGrace))
	res = e.reconcile("rot")
	if got := secretKeys(); !slices.Equal(got, []string{second}) {
		t.Fatalf("keys after the grace = %v, want [%s]", got, second)
	}
	if want := interval - KeyRetirementGrace; res.RequeueAfter != want {
		t.Fatalf("RequeueAfter = %v, want %v", res.RequeueAfter, want)
	}
	if evs := e.drainEvents(); !hasEvent(evs, eventSigningKeysPruned) {
		t.Fatalf("no %s event: %q", eventSigningKeysPruned, evs)
	}
	if c := e.casino("rot"); !slices.Equal(c.Status.KeyIDs, []string{second}) {
		t.Fatalf("status keyIDs = %v", c.Status.KeyIDs)
	}
}

// TestForcedRotationByAnnotation: casino.fairplay.dev/rotate-keys adds a
// key at once and is removed, so the same command works again later.
func TestForcedRotationByAnnotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("force", "registry.example/fairplay:v1")
	e.reconcile("force")

	for i := 1; i <= 2; i++ {
		e.clock.Step(time.Minute)
		e.update("force", func(c *casinov1alpha1.Casino) {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[casinov1alpha1.AnnotationRotateKeys] = "now"
		})
		e.reconcile("force")
		c := e.casino("force")
		if _, ok := c.Annotations[casinov1alpha1.AnnotationRotateKeys]; ok {
			t.Fatal("annotation not removed after the rotation")
		}
		if len(c.Status.KeyIDs) != i+1 {
			t.Fatalf("after forced rotation %d: keys %v", i, c.Status.KeyIDs)
		}
		if want := e.clock.Now().Format(accounts.KeyIDFormat); c.Status.ActiveKeyID != want {
			t.Fatalf("active key = %s, want %s", c.Status.ActiveKeyID, want)
		}
	}
	if evs := e.drainEvents(); !strings.Contains(strings.Join(evs, "\n"), "requested by annotation") {
		t.Fatalf("events do not say the rotation was requested: %q", evs)
	}
}

// logDescribe logs the Casino as `kubectl describe casino` shows it: spec
// and status, then the Events.
func logDescribe(t *testing.T, e *env, name string, evs []string) {
	t.Helper()
	c := e.casino(name)
	c.ManagedFields = nil
	out, err := yaml.Marshal(c)
	must(t, err)
	t.Logf("kubectl describe casino %s (as YAML), after one rotation:\n%s\nEvents:\n  %s", name, out, strings.Join(evs, "\n  "))
}
