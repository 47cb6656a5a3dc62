package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	planted := keyAt(t, t0.Add(3650*day))
	skewed := keyAt(t, t0.Add(day+time.Minute))
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
		{name: "two young keys stay with their elder; wake when the newest activates", keys: []signingKey{k0, k1, k2}, now: t0.Add(2*day + time.Minute),
			wantKeep: []string{k1.id, k2.id}, wantPruned: []string{k0.id}, wantNext: t0.Add(3 * day), wantWake: 2 * time.Minute},
		{name: "a key dated years ahead is dropped, and rotation goes on", keys: []signingKey{k0, planted}, now: t0.Add(day),
			wantRotate: true, wantKeep: []string{k0.id}, wantPruned: []string{planted.id}, wantNext: t0.Add(day), wantWake: time.Second},
		{name: "a key dated minutes ahead (another node's clock) stays", keys: []signingKey{k0, skewed}, now: t0.Add(day),
			wantKeep: []string{k0.id, skewed.id}, wantNext: t0.Add(2*day + time.Minute), wantWake: 4 * time.Minute},
		{name: "newest active: wake for the retirement", keys: []signingKey{k1, k2}, now: t0.Add(2*day + 3*time.Minute),
			wantKeep: []string{k1.id, k2.id}, wantNext: t0.Add(3 * day), wantWake: KeyRetirementGrace - 3*time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := planKeys(tt.keys, tt.now, keyTiming{interval: day, activation: DefaultActivationDelay, grace: KeyRetirementGrace}, tt.force)
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
	p := planKeys([]signingKey{k}, t0.Add(300*time.Millisecond), keyTiming{interval: time.Hour, grace: KeyRetirementGrace}, true)
	if !p.newKeyTime.After(k.created) {
		t.Fatalf("new key time %v is not after %v", p.newKeyTime, k.created)
	}
	if id := p.newKeyTime.Format(accounts.KeyIDFormat); id <= k.id {
		t.Fatalf("new key id %s does not sort after %s", id, k.id)
	}
}

// TestKeyTiming: the previous key stays until no replica signs with it and
// its last token expired (activation delay + access-token lifetime +
// margin), never less than KeyRetirementGrace.
func TestKeyTiming(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		activation *metav1.Duration
		env        []corev1.EnvVar
		want       keyTiming
	}{
		{"defaults", nil, nil, keyTiming{interval: DefaultRotationInterval, activation: 3 * time.Minute, grace: 30 * time.Minute}},
		{"no delay", &metav1.Duration{}, nil, keyTiming{interval: DefaultRotationInterval, grace: 30 * time.Minute}},
		{"longest delay the API admits", &metav1.Duration{Duration: 10 * time.Minute}, nil,
			keyTiming{interval: DefaultRotationInterval, activation: 10 * time.Minute, grace: 10*time.Minute + 15*time.Minute + 5*time.Minute}},
		// The server caps the TTL at 15m today; the grace does not rely on it.
		{"long-lived tokens", nil, []corev1.EnvVar{{Name: "FAIRPLAY_ACCESS_TOKEN_TTL", Value: "1h"}},
			keyTiming{interval: DefaultRotationInterval, activation: 3 * time.Minute, grace: 3*time.Minute + time.Hour + 5*time.Minute}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := fullCasino()
			c.Spec.SigningKeys.ActivationDelay = tt.activation
			c.Spec.Env = tt.env
			got := keyTimingFor(c)
			if got != tt.want {
				t.Fatalf("keyTimingFor = %+v, want %+v", got, tt.want)
			}
			// The servers get the same delay the retirement assumes.
			if v := envMap(desiredDeployment(c, c.Spec.Image).Spec.Template.Spec.Containers[0].Env)["FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY"]; v != tt.want.activation.String() {
				t.Fatalf("FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY = %q, want %s", v, tt.want.activation)
			}
		})
	}
}

// TestActiveKeyID: the newest key past its activation delay, or the oldest
// key when none is.
func TestActiveKeyID(t *testing.T) {
	t.Parallel()
	k0, k1 := keyAt(t, t0), keyAt(t, t0.Add(time.Hour))
	const delay = 3 * time.Minute
	for _, tt := range []struct {
		name string
		keys []signingKey
		now  time.Time
		want string
	}{
		{"new installation: the only key signs at once", []signingKey{k0}, t0, k0.id},
		{"successor not active yet", []signingKey{k0, k1}, t0.Add(time.Hour + delay - time.Second), k0.id},
		{"successor active", []signingKey{k0, k1}, t0.Add(time.Hour + delay), k1.id},
		{"none active yet: the oldest, which the replicas have had longest", []signingKey{k0, k1}, t0.Add(-time.Minute), k0.id},
	} {
		if got := activeKeyID(tt.keys, tt.now, delay); got != tt.want {
			t.Errorf("%s: activeKeyID = %s, want %s", tt.name, got, tt.want)
		}
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
// the fake clock: one key at creation, a second after the interval (active
// after the activation delay), both kept for KeyRetirementGrace, then the
// first retired. It logs the Casino as `kubectl describe` would show it
// after the rotation.
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
	if res.RequeueAfter != DefaultActivationDelay {
		t.Fatalf("RequeueAfter = %v, want the activation of the new key in %v", res.RequeueAfter, DefaultActivationDelay)
	}
	// The new key verifies at once but signs only after the activation delay.
	c := e.casino("rot")
	if c.Status.ActiveKeyID != first[0] || !slices.Equal(c.Status.KeyIDs, []string{first[0], second}) ||
		!c.Status.NextRotation.Time.Equal(t0.Add(2*interval)) {
		t.Fatalf("status after rotation: active %s keys %v next %v", c.Status.ActiveKeyID, c.Status.KeyIDs, c.Status.NextRotation)
	}
	evs := e.drainEvents()
	if !hasEvent(evs, eventSigningKeyRotated) {
		t.Fatalf("no %s event: %q", eventSigningKeyRotated, evs)
	}
	e.clock.SetTime(t0.Add(interval + DefaultActivationDelay))
	res = e.reconcile("rot")
	if c := e.casino("rot"); c.Status.ActiveKeyID != second {
		t.Fatalf("active key after the activation delay = %s, want %s", c.Status.ActiveKeyID, second)
	}
	if want := KeyRetirementGrace - DefaultActivationDelay; res.RequeueAfter != want {
		t.Fatalf("RequeueAfter = %v, want the retirement of the old key in %v", res.RequeueAfter, want)
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

// annotateRotation sets casino.fairplay.dev/rotate-keys-at to value.
func (e *env) annotateRotation(name, value string) {
	e.t.Helper()
	e.update(name, func(c *casinov1alpha1.Casino) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[casinov1alpha1.AnnotationRotateKeysAt] = value
	})
}

// TestForcedRotationByAnnotation: a rotate-keys-at time later than
// status.lastForcedRotation adds one key at once, is recorded in the status
// and on the Secret, and stays on the Casino (the operator never removes
// it); reconciling again, or re-applying the same value, adds nothing; a
// later time rotates again; the new key signs after the activation delay
// (here spec's 2m).
func TestForcedRotationByAnnotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	const delay = 2 * time.Minute
	e.newCasino("force", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Spec.SigningKeys.ActivationDelay = &metav1.Duration{Duration: delay}
	})
	e.reconcile("force")

	for i := 1; i <= 2; i++ {
		e.clock.Step(5 * time.Minute)
		previous := e.casino("force").Status.ActiveKeyID
		requested := e.clock.Now().Add(-time.Second).UTC()
		e.annotateRotation("force", requested.Format(time.RFC3339))
		res := e.reconcile("force")
		c := e.casino("force")
		if got := c.Annotations[casinov1alpha1.AnnotationRotateKeysAt]; got != requested.Format(time.RFC3339) {
			t.Fatalf("the operator changed the annotation: %q", got)
		}
		if len(c.Status.KeyIDs) != i+1 {
			t.Fatalf("after forced rotation %d: keys %v", i, c.Status.KeyIDs)
		}
		if c.Status.LastForcedRotation == nil || !c.Status.LastForcedRotation.Time.Equal(requested) {
			t.Fatalf("status.lastForcedRotation = %v, want %v", c.Status.LastForcedRotation, requested)
		}
		var secret corev1.Secret
		e.get(signingKeysSecretName(c), &secret)
		if got := secret.Annotations[casinov1alpha1.AnnotationLastForcedRotation]; got != requested.Format(time.RFC3339) {
			t.Fatalf("secret records the request as %q", got)
		}
		newKey := e.clock.Now().Format(accounts.KeyIDFormat)
		if c.Status.KeyIDs[i] != newKey || c.Status.ActiveKeyID != previous || res.RequeueAfter != delay {
			t.Fatalf("after forced rotation %d: keys %v active %s (want %s until %s) requeue %v",
				i, c.Status.KeyIDs, c.Status.ActiveKeyID, previous, delay, res.RequeueAfter)
		}
		// The same request again (a GitOps sync re-applying it, or a
		// reconcile for another reason) is already served.
		e.clock.Step(delay)
		e.annotateRotation("force", requested.Format(time.RFC3339))
		e.reconcile("force")
		e.reconcile("force")
		if c := e.casino("force"); c.Status.ActiveKeyID != newKey || len(c.Status.KeyIDs) != i+1 {
			t.Fatalf("after the activation delay: active %s keys %v, want %s and no further key", c.Status.ActiveKeyID, c.Status.KeyIDs, newKey)
		}
	}
	// An earlier time (a Git revert) rotates nothing.
	e.annotateRotation("force", t0.Format(time.RFC3339))
	e.reconcile("force")
	if keys := e.casino("force").Status.KeyIDs; len(keys) != 3 {
		t.Fatalf("an earlier rotate-keys-at rotated: %v", keys)
	}
	evs := strings.Join(e.drainEvents(), "\n")
	if !strings.Contains(evs, "requested by annotation "+casinov1alpha1.AnnotationRotateKeysAt) {
		t.Fatalf("events do not say the rotation was requested: %q", evs)
	}
	// ...and says so: it may be a request made after one dated ahead of it.
	if !strings.Contains(evs, "Warning "+eventInvalidRotationRequest) || !strings.Contains(evs, "is earlier than the last rotation it asked for") {
		t.Fatalf("an earlier rotate-keys-at rotated nothing without a word: %q", evs)
	}
}

// TestForcedRotationAfterARequestDatedAhead: a request dated a few minutes
// ahead (within the clock skew allowed) is honoured at its own time; a
// request made after it with the then current time, earlier than the
// first's, rotates nothing, and said nothing about it: an incident
// responder's `$(date)` was swallowed. Now a Warning Event says so and
// names the time to beat; a time after it rotates. Found by a review.
func TestForcedRotationAfterARequestDatedAhead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("ahead", "registry.example/fairplay:v1")
	e.reconcile("ahead")
	e.clock.Step(time.Hour)
	ahead := e.clock.Now().Add(4 * time.Minute).UTC().Truncate(time.Second)
	e.annotateRotation("ahead", ahead.Format(time.RFC3339))
	e.reconcile("ahead")
	if keys := e.casino("ahead").Status.KeyIDs; len(keys) != 2 {
		t.Fatalf("a request 4 minutes ahead: keys %v", keys)
	}
	e.drainEvents()
	e.clock.Step(time.Minute)
	e.annotateRotation("ahead", e.clock.Now().UTC().Format(time.RFC3339))
	e.reconcile("ahead")
	if keys := e.casino("ahead").Status.KeyIDs; len(keys) != 2 {
		t.Fatalf("a request earlier than the one honoured rotated: keys %v", keys)
	}
	evs := strings.Join(e.drainEvents(), "\n")
	if !strings.Contains(evs, "Warning "+eventInvalidRotationRequest) || !strings.Contains(evs, ahead.Format(time.RFC3339)) {
		t.Fatalf("the swallowed request was not reported with the time to beat: %q", evs)
	}
	e.annotateRotation("ahead", ahead.Add(time.Second).Format(time.RFC3339))
	e.reconcile("ahead")
	if keys := e.casino("ahead").Status.KeyIDs; len(keys) != 3 {
		t.Fatalf("a request after the one honoured: keys %v", keys)
	}
}

// TestForcedRotationRejectsBadRequests: an unparsable time, a time far in
// the future and the retired imperative annotation rotate nothing, change
// no annotation and say why in a Warning Event.
func TestForcedRotationRejectsBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("bad", "registry.example/fairplay:v1")
	e.reconcile("bad")
	e.clock.Step(time.Hour)
	e.drainEvents()
	for _, tc := range []struct{ key, value, want string }{
		{casinov1alpha1.AnnotationRotateKeysAt, "now", "is not an RFC 3339 time"},
		{casinov1alpha1.AnnotationRotateKeysAt, e.clock.Now().Add(time.Hour).Format(time.RFC3339), "in the future"},
		{casinov1alpha1.AnnotationRotateKeys, "now", "is no longer honoured"},
	} {
		e.update("bad", func(c *casinov1alpha1.Casino) {
			c.Annotations = map[string]string{tc.key: tc.value}
		})
		e.reconcile("bad")
		c := e.casino("bad")
		if len(c.Status.KeyIDs) != 1 || c.Status.LastForcedRotation != nil {
			t.Fatalf("%s=%s: keys %v lastForcedRotation %v", tc.key, tc.value, c.Status.KeyIDs, c.Status.LastForcedRotation)
		}
		if c.Annotations[tc.key] != tc.value {
			t.Fatalf("%s=%s: the operator changed the annotation to %q", tc.key, tc.value, c.Annotations[tc.key])
		}
		evs := strings.Join(e.drainEvents(), "\n")
		if !strings.Contains(evs, "Warning "+eventInvalidRotationRequest) || !strings.Contains(evs, tc.want) {
			t.Fatalf("%s=%s: events %q, want a Warning saying %q", tc.key, tc.value, evs, tc.want)
		}
	}
}

// TestForcedRotationOnNewCasinoAddsNoSecondKey: a Casino created with the
// annotation already set (from Git) gets one key, and the request counts
// as served.
func TestForcedRotationOnNewCasinoAddsNoSecondKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	at := t0.Add(-time.Hour).Format(time.RFC3339)
	e.newCasino("fresh", "registry.example/fairplay:v1", func(c *casinov1alpha1.Casino) {
		c.Annotations = map[string]string{casinov1alpha1.AnnotationRotateKeysAt: at}
	})
	e.reconcile("fresh")
	e.reconcile("fresh")
	c := e.casino("fresh")
	if len(c.Status.KeyIDs) != 1 || c.Status.LastForcedRotation == nil || c.Status.LastForcedRotation.Format(time.RFC3339) != at {
		t.Fatalf("keys %v lastForcedRotation %v", c.Status.KeyIDs, c.Status.LastForcedRotation)
	}
}

// staleStatusClient serves Casinos without status.lastForcedRotation, as a
// cache that has not seen the status write of the reconcile that rotated,
// or as the API server would after that status write failed.
type staleStatusClient struct{ client.Client }

func (s staleStatusClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := s.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if c, ok := obj.(*casinov1alpha1.Casino); ok {
		c.Status.LastForcedRotation = nil
	}
	return nil
}

// TestForcedRotationIgnoresStaleStatus: the Secret's own record of the
// request (written with the key) keeps a reconcile that reads a Casino
// without status.lastForcedRotation from rotating again; one request, one
// key.
func TestForcedRotationIgnoresStaleStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createSecrets()
	e.newCasino("stale", "registry.example/fairplay:v1")
	e.reconcile("stale")
	e.clock.Step(time.Hour)
	e.annotateRotation("stale", e.clock.Now().Format(time.RFC3339))
	e.reconcile("stale")
	if keys := e.casino("stale").Status.KeyIDs; len(keys) != 2 {
		t.Fatalf("keys = %v, want the forced second key", keys)
	}

	e.clock.Step(time.Minute)
	e.r.Client = staleStatusClient{k8sClient}
	e.reconcile("stale")
	if keys := e.casino("stale").Status.KeyIDs; len(keys) != 2 {
		t.Fatalf("keys = %v: rotated again for a request already served", keys)
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

// TestForcedRotationIgnoresARecordFromTheFuture: a record of the last
// request served that lies later than any request could have (a Secret
// editor's annotation, or a status writer's lastForcedRotation, of
// 2099-01-01) swallowed every rotate-keys-at until then, a leaked key's
// rotation included, with nothing but a Warning (found by a review playing a
// hostile tenant). Such a record is ignored: the request rotates, and the
// status records the request, not the forged time.
func TestForcedRotationIgnoresARecordFromTheFuture(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"secret", "status"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.createSecrets()
			name := "future-" + where
			e.newCasino(name, "registry.example/fairplay:v1")
			e.reconcile(name)
			e.clock.Step(time.Hour)
			forged := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
			switch where {
			case "secret":
				var secret corev1.Secret
				e.get(signingKeysSecretName(e.casino(name)), &secret)
				if secret.Annotations == nil {
					secret.Annotations = map[string]string{}
				}
				secret.Annotations[casinov1alpha1.AnnotationLastForcedRotation] = forged.Format(time.RFC3339)
				must(t, k8sClient.Update(e.ctx, &secret))
			case "status":
				c := e.casino(name)
				c.Status.LastForcedRotation = &metav1.Time{Time: forged}
				must(t, k8sClient.Status().Update(e.ctx, c))
			}
			requested := e.clock.Now().UTC().Truncate(time.Second)
			e.annotateRotation(name, requested.Format(time.RFC3339))
			e.reconcile(name)
			c := e.casino(name)
			if len(c.Status.KeyIDs) != 2 {
				t.Fatalf("keys %v: the request was swallowed by a forged record of %s", c.Status.KeyIDs, forged)
			}
			if c.Status.LastForcedRotation == nil || !c.Status.LastForcedRotation.Time.Equal(requested) {
				t.Fatalf("status.lastForcedRotation = %v, want the request's %v", c.Status.LastForcedRotation, requested)
			}
		})
	}
}
