package controller

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
	"github.com/fairplay/fairplay/internal/accounts"
)

// Signing-key timing. The kubelet takes up to about two minutes (sync period
// plus its Secret cache) to update a mounted Secret, so a server signs with a
// new key only activationDelay (default 3 minutes) after the creation time in
// its id (FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY; the same moment on every
// replica), by when every replica can verify it. The previous key signs
// until then (on a replica that has not read the new key yet, a little
// longer, bounded by the propagation delay), and its tokens live for the
// access-token lifetime (FAIRPLAY_ACCESS_TOKEN_TTL, default 15 minutes). So
// the previous key may go once its successor is activationDelay + TTL old,
// plus keyRetirementMargin for the propagation delay and clock skew between
// nodes; KeyRetirementGrace keeps at least 30 minutes.
const (
	// DefaultRotationInterval applies when spec.signingKeys.rotationInterval
	// is unset (the API defaults it to the same value).
	DefaultRotationInterval = 24 * time.Hour
	// DefaultActivationDelay applies when spec.signingKeys.activationDelay
	// is unset (the API defaults it to the same value).
	DefaultActivationDelay = 3 * time.Minute
	// KeyRetirementGrace is the least time a key is kept after its successor
	// was added; retirementGrace extends it for long activation delays or
	// token lifetimes. With rotation interval R and the default settings a key
	// lives R + 30 min, and during the 30 minutes after each rotation two
	// keys are present.
	KeyRetirementGrace = 30 * time.Minute
	// keyRetirementMargin covers the kubelet's propagation of the new key
	// (a replica that has not read it keeps signing with the previous one)
	// and clock skew between the operator and the nodes.
	keyRetirementMargin = 5 * time.Minute
	// maxRotationRequestSkew is how far in the future a rotate-keys-at time
	// may lie (clock skew between the requester and the operator).
	maxRotationRequestSkew = 5 * time.Minute
	// defaultAccessTokenTTL is the server's FAIRPLAY_ACCESS_TOKEN_TTL default.
	defaultAccessTokenTTL = 15 * time.Minute
)

// keyTiming is the schedule of a Casino's signing keys.
type keyTiming struct {
	// interval between rotations.
	interval time.Duration
	// activation is how long after its creation a key starts signing.
	activation time.Duration
	// grace is how long a key is kept after its successor was created.
	grace time.Duration
}

// signingKey is one key of the Secret, named by its creation time.
type signingKey struct {
	id      string
	created time.Time
	pem     []byte
}

// keyState is what the signing-key step found or did.
type keyState struct {
	secretName   string
	ids          []string
	activeID     string
	nextRotation time.Time
	// requeueAfter is when the next rotation or retirement is due.
	requeueAfter time.Duration
	// lastForced is the rotate-keys-at time last honoured (nil: never).
	lastForced *time.Time
}

// signingKeysSecretName is the Secret mounted at FAIRPLAY_SIGNING_KEYS_DIR.
func signingKeysSecretName(casino *casinov1alpha1.Casino) string {
	return casino.Name + "-signing-keys"
}

func rotationInterval(casino *casinov1alpha1.Casino) time.Duration {
	if d := casino.Spec.SigningKeys.RotationInterval; d != nil && d.Duration > 0 {
		return d.Duration
	}
	return DefaultRotationInterval
}

func activationDelay(casino *casinov1alpha1.Casino) time.Duration {
	if d := casino.Spec.SigningKeys.ActivationDelay; d != nil && d.Duration >= 0 {
		return d.Duration
	}
	return DefaultActivationDelay
}

// keyTimingFor is casino's key schedule. The access-token lifetime is the
// server's default unless spec.env sets FAIRPLAY_ACCESS_TOKEN_TTL (the API
// accepts only a literal duration there).
func keyTimingFor(casino *casinov1alpha1.Casino) keyTiming {
	activation := activationDelay(casino)
	ttl := envDuration(casino.Spec.Env, "FAIRPLAY_ACCESS_TOKEN_TTL", defaultAccessTokenTTL)
	return keyTiming{
		interval:   rotationInterval(casino),
		activation: activation,
		grace:      retirementGrace(activation, ttl),
	}
}

// retirementGrace is how long a key stays after its successor was created:
// until no replica signs with it any more (activation, a little more where
// the new key arrived late) and the last token it signed expired (ttl).
func retirementGrace(activation, ttl time.Duration) time.Duration {
	return max(KeyRetirementGrace, activation+ttl+keyRetirementMargin)
}

// reconcileSigningKeys creates the signing-key Secret with one key, adds a
// key every rotation interval (or at once when the Casino's
// casino.fairplay.dev/rotate-keys-at annotation names a time later than the
// last forced rotation; see forcedRotation), and retires keys whose
// successor is older than the retirement grace. Entries that are not
// `<kid>.pem` Ed25519 keys are dropped: the server would refuse to load them.
func (r *CasinoReconciler) reconcileSigningKeys(ctx context.Context, casino *casinov1alpha1.Casino) (keyState, error) {
	now := r.Clock.Now().UTC()
	name := signingKeysSecretName(casino)
	timing := keyTimingFor(casino)
	interval := timing.interval
	var secret corev1.Secret
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: casino.Namespace, Name: name}, &secret)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return keyState{}, fmt.Errorf("get secret %s: %w", name, err)
	}

	request := r.forcedRotation(casino, &secret)
	// A new Secret starts with a fresh key: a request made before it existed
	// is honoured by that key, not by a second one.
	forced := exists && request.due
	keys, dropped := parseSigningKeys(secret.Data)
	if exists && !metav1.IsControlledBy(&secret, casino) && dropped > 0 {
		// Someone else's Secret of that name, holding more than signing
		// keys: rewriting it would destroy what it holds and make it the
		// Casino's. One that holds only keys (restored from a backup, as
		// docs/deploy.md describes) is adopted.
		return keyState{}, &errNotOurs{kind: "Secret", name: name}
	}
	plan := planKeys(keys, now, timing, forced)
	rotated := plan.rotate
	if rotated {
		kid, pemBytes, err := accounts.GenerateKey(plan.newKeyTime)
		if err != nil {
			return keyState{}, err
		}
		plan.keep = append(plan.keep, signingKey{id: kid, created: plan.newKeyTime, pem: pemBytes})
		// Adding a key may make an older one retire later, never sooner;
		// recompute the schedule with the new key in place.
		plan = planKeys(plan.keep, now, timing, false).withPruned(plan.pruned)
	}

	data := make(map[string][]byte, len(plan.keep))
	for _, k := range plan.keep {
		data[k.id+".pem"] = k.pem
	}
	desired := secret.DeepCopy()
	desired.Name, desired.Namespace = name, casino.Namespace
	desired.Type = corev1.SecretTypeOpaque
	desired.Data = data
	desired.StringData = nil
	if desired.Labels == nil {
		desired.Labels = map[string]string{}
	}
	maps.Copy(desired.Labels, labelsFor(casino, componentKeys))
	if request.due {
		if desired.Annotations == nil {
			desired.Annotations = map[string]string{}
		}
		desired.Annotations[casinov1alpha1.AnnotationLastForcedRotation] = request.at.UTC().Format(time.RFC3339)
	}
	if err := controllerutil.SetControllerReference(casino, desired, r.Scheme); err != nil {
		return keyState{}, err
	}

	switch {
	case !exists:
		if err := r.Create(ctx, desired, client.FieldOwner(FieldManager)); err != nil {
			return keyState{}, fmt.Errorf("create secret %s: %w", name, err)
		}
		r.event(casino, corev1.EventTypeNormal, eventSigningKeysCreated, "RotateKeys",
			"Created Secret %s with signing key %s", name, plan.keep[len(plan.keep)-1].id)
	case rotated || request.due || len(plan.pruned) > 0 || dropped > 0 ||
		!maps.Equal(secret.Labels, desired.Labels) || !equality.Semantic.DeepEqual(secret.OwnerReferences, desired.OwnerReferences) ||
		secret.Type != desired.Type:
		// Update carries the resourceVersion read above: a concurrent writer
		// makes it fail and the next reconcile starts from fresh data.
		if err := r.Update(ctx, desired, client.FieldOwner(FieldManager)); err != nil {
			return keyState{}, fmt.Errorf("update secret %s: %w", name, err)
		}
		if rotated {
			why := "rotation interval " + interval.String() + " elapsed"
			if forced {
				why = "requested by annotation " + casinov1alpha1.AnnotationRotateKeysAt + "=" + request.at.UTC().Format(time.RFC3339)
			}
			newest := plan.keep[len(plan.keep)-1]
			r.event(casino, corev1.EventTypeNormal, eventSigningKeyRotated, "RotateKeys",
				"Added signing key %s (%s); it verifies once the servers read it and signs from %s (activation delay %s)",
				newest.id, why, newest.created.Add(timing.activation).Format(time.RFC3339), timing.activation)
		}
		if len(plan.pruned) > 0 {
			r.event(casino, corev1.EventTypeNormal, eventSigningKeysPruned, "RotateKeys",
				"Removed signing keys %s: their successors are older than %s", strings.Join(plan.pruned, ", "), timing.grace)
		}
	}

	st := keyState{secretName: name, nextRotation: plan.nextRotation, requeueAfter: plan.requeueAfter, lastForced: request.honoured}
	if request.due {
		st.lastForced = &request.at
	}
	for _, k := range plan.keep {
		st.ids = append(st.ids, k.id)
	}
	st.activeID = activeKeyID(plan.keep, now, timing.activation)
	return st, nil
}

// rotationRequest is what the rotate-keys-at annotation asks for.
type rotationRequest struct {
	// at is the annotation's time (zero when absent or invalid).
	at time.Time
	// honoured is the last request already served: the later of
	// status.lastForcedRotation and the Secret's record of it (nil: none).
	honoured *time.Time
	// due: at is later than honoured, so one key is to be added now.
	due bool
}

// forcedRotation reads the casino.fairplay.dev/rotate-keys-at annotation and
// compares it with the last request served, as recorded in the status and,
// written in the same update as the key, on the Secret (read from the API
// server: a stale cached Casino or a lost status write cannot make the same
// request rotate twice). An unparsable value, or the retired imperative
// rotate-keys annotation, rotates nothing and is reported as a Warning.
func (r *CasinoReconciler) forcedRotation(casino *casinov1alpha1.Casino, secret *corev1.Secret) rotationRequest {
	var req rotationRequest
	// A request honoured lay at most maxRotationRequestSkew ahead of the
	// clock when it was served, so a record later than that now was not
	// written by this operator: a Secret editor's (the annotation) or a
	// status writer's 2099-01-01 swallowed every rotate-keys-at until then,
	// a leaked key's rotation included (found by a review playing a hostile
	// tenant; TestForcedRotationIgnoresARecordFromTheFuture). Such a record
	// is ignored, and the status written is the one honoured before it.
	latest := r.Clock.Now().UTC().Add(maxRotationRequestSkew)
	if lf := casino.Status.LastForcedRotation; lf != nil && !lf.UTC().After(latest) {
		t := lf.UTC()
		req.honoured = &t
	}
	if v, ok := secret.Annotations[casinov1alpha1.AnnotationLastForcedRotation]; ok {
		if t, err := time.Parse(time.RFC3339, v); err == nil && !t.After(latest) && (req.honoured == nil || t.After(*req.honoured)) {
			t = t.UTC()
			req.honoured = &t
		}
	}
	if _, ok := casino.Annotations[casinov1alpha1.AnnotationRotateKeys]; ok {
		r.event(casino, corev1.EventTypeWarning, eventInvalidRotationRequest, "RotateKeys",
			"Annotation %s is no longer honoured and nothing was rotated: set %s to the current time instead (kubectl annotate casino/%s %s=$(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ) --overwrite)",
			casinov1alpha1.AnnotationRotateKeys, casinov1alpha1.AnnotationRotateKeysAt, casino.Name, casinov1alpha1.AnnotationRotateKeysAt)
	}
	v, ok := casino.Annotations[casinov1alpha1.AnnotationRotateKeysAt]
	if !ok {
		return req
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	if err != nil {
		r.event(casino, corev1.EventTypeWarning, eventInvalidRotationRequest, "RotateKeys",
			"Annotation %s=%q is not an RFC 3339 time such as 2026-11-24T05:00:00Z; nothing was rotated", casinov1alpha1.AnnotationRotateKeysAt, v)
		return req
	}
	if limit := r.Clock.Now().Add(maxRotationRequestSkew); at.After(limit) {
		// A time in the future would swallow every later request until then.
		r.event(casino, corev1.EventTypeWarning, eventInvalidRotationRequest, "RotateKeys",
			"Annotation %s=%s is more than %s in the future; nothing was rotated (use the current time)", casinov1alpha1.AnnotationRotateKeysAt, v, maxRotationRequestSkew)
		return req
	}
	// Second precision, as the annotation and the status store it, so the
	// comparison is the same after a round trip through either.
	req.at = at.UTC().Truncate(time.Second)
	req.due = req.honoured == nil || req.at.After(*req.honoured)
	if !req.due && req.at.Before(*req.honoured) {
		// An earlier time (a Git revert) is not a request; but it may be
		// one made in good faith after a request dated ahead of it (within
		// the skew allowed), which would otherwise be swallowed without a
		// word (found by a review).
		r.event(casino, corev1.EventTypeWarning, eventInvalidRotationRequest, "RotateKeys",
			"Annotation %s=%s is earlier than the last rotation it asked for (%s); nothing was rotated (set a time after that one)",
			casinov1alpha1.AnnotationRotateKeysAt, v, req.honoured.Format(time.RFC3339))
	}
	return req
}

// activeKeyID is the key the servers sign with at now: the newest key
// activation past its creation time, or, when none is, the oldest key (on a
// new installation the only one; after a forced rotation within the delay,
// the one the replicas have had longest). keys are oldest first.
func activeKeyID(keys []signingKey, now time.Time, activation time.Duration) string {
	for i := len(keys) - 1; i >= 0; i-- {
		if !now.Before(keys[i].created.Add(activation)) {
			return keys[i].id
		}
	}
	return keys[0].id
}

// parseKeyID is the creation time a key id names.
func parseKeyID(kid string) (time.Time, error) {
	return time.Parse(accounts.KeyIDFormat, kid)
}

// parseSigningKeys reads the `<kid>.pem` entries of the Secret, oldest
// first, and counts the entries it cannot use.
func parseSigningKeys(data map[string][]byte) (keys []signingKey, dropped int) {
	for name, raw := range data {
		kid, ok := strings.CutSuffix(name, ".pem")
		created, err := time.Parse(accounts.KeyIDFormat, kid)
		if !ok || err != nil || !validKeyPEM(raw) {
			dropped++
			continue
		}
		keys = append(keys, signingKey{id: kid, created: created, pem: raw})
	}
	slices.SortFunc(keys, func(a, b signingKey) int { return strings.Compare(a.id, b.id) })
	return keys, dropped
}

func validKeyPEM(raw []byte) bool {
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "PRIVATE KEY" {
		return false
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return false
	}
	_, ok := key.(ed25519.PrivateKey)
	return ok
}

// futureKeySkew is how far ahead of the operator's clock a key's date may
// be: node clocks agree to within seconds (NTP), so a key dated later was
// made by no operator's clock.
const futureKeySkew = 5 * time.Minute

// keyPlan is the pure decision of one signing-key reconcile.
type keyPlan struct {
	keep         []signingKey
	pruned       []string
	rotate       bool
	newKeyTime   time.Time
	nextRotation time.Time
	requeueAfter time.Duration
}

func (p keyPlan) withPruned(pruned []string) keyPlan {
	p.pruned = append(slices.Clone(pruned), p.pruned...)
	return p
}

// planKeys decides, for keys sorted oldest first, whether to add a key now
// and which keys to retire. A key retires once its successor is at least
// t.grace old: from then on no replica signs with it and every token it
// signed has expired. Hence the newest key older than the grace and every
// newer key stay, so at least one key always remains and two remain during
// the grace after each rotation. When rotating, the new key's time is now,
// or one second after the newest key when that is later (two rotations
// within a second must still give ordered, distinct key ids). The wake-up
// is the next rotation, retirement or activation of a successor
// (status.activeKeyID changes then).
//
// A key dated more than futureKeySkew after now was not made by this
// operator (its keys are dated by its clock) and is dropped first: kept, it
// would be the newest for good — no rotation until its date, never
// retired, verifying whatever it signed — so a key planted in the Secret
// under a far-future id would outlive every rotation. Found by a review.
func planKeys(keys []signingKey, now time.Time, t keyTiming, force bool) keyPlan {
	var p keyPlan
	keys = slices.DeleteFunc(slices.Clone(keys), func(k signingKey) bool {
		if k.created.After(now.Add(futureKeySkew)) {
			p.pruned = append(p.pruned, k.id)
			return true
		}
		return false
	})
	interval := t.interval
	if n := len(keys); n == 0 || force || !now.Before(keys[n-1].created.Add(interval)) {
		p.rotate = true
		p.newKeyTime = now.Truncate(time.Second)
		if n > 0 && !p.newKeyTime.After(keys[n-1].created) {
			p.newKeyTime = keys[n-1].created.Add(time.Second)
		}
	}

	first := 0
	for i := len(keys) - 1; i > 0; i-- {
		if now.Sub(keys[i].created) >= t.grace {
			first = i
			break
		}
	}
	for _, k := range keys[:first] {
		p.pruned = append(p.pruned, k.id)
	}
	p.keep = slices.Clone(keys[first:])

	if len(p.keep) > 0 {
		newest := p.keep[len(p.keep)-1]
		p.nextRotation = newest.created.Add(interval)
		// A rotation already due (the caller rotates in this pass) wakes in a
		// second; the retirement and activation below are in the future.
		p.requeueAfter = max(p.nextRotation.Sub(now), time.Second)
		if len(p.keep) > 1 {
			// The oldest kept key retires when its successor reaches the grace.
			p.requeueAfter = minPositive(p.requeueAfter, p.keep[1].created.Add(t.grace).Sub(now))
		}
		// The active key changes when a younger key activates (the oldest
		// signs anyway while none is active).
		for _, k := range p.keep[1:] {
			if activates := k.created.Add(t.activation); activates.After(now) {
				p.requeueAfter = min(p.requeueAfter, activates.Sub(now))
				break
			}
		}
	}
	return p
}
