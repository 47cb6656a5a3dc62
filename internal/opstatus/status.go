// Package opstatus prints a Casino the way an operator on call wants to see
// it: the version running and asked for, every condition, the signing keys
// with their ages, the last migration and the ledger audit. It backs
// `operator status` (also installed as the kubectl plugin `kubectl
// fairplay status`) and the real-node suite's dumps.
package opstatus

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
	"github.com/fairplay/fairplay/internal/accounts"
)

// Get reads the Casino namespace/name.
func Get(ctx context.Context, c client.Reader, namespace, name string) (*casinov1alpha1.Casino, error) {
	var casino casinov1alpha1.Casino
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &casino); err != nil {
		return nil, fmt.Errorf("casino %s/%s: %w", namespace, name, err)
	}
	return &casino, nil
}

// Write prints casino's summary to w as of now.
func Write(w io.Writer, casino *casinov1alpha1.Casino, now time.Time) error {
	st := casino.Status
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(tw, format, args...) }

	p("Casino\t%s/%s (generation %d, status observed %d)\n", casino.Namespace, casino.Name, casino.Generation, st.ObservedGeneration)
	p("Version\t%s\n", version(casino))
	p("Replicas\t%d available of %d (spec %s)\n", st.AvailableReplicas, st.Replicas, replicas(casino))
	p("\n")
	p("CONDITION\tSTATUS\tREASON\tAGE\tMESSAGE\n")
	conds := slices.Clone(st.Conditions)
	order := []string{"Ready", "Reconciling", "Stalled", "Progressing", "Degraded", "MigrationsSucceeded", "LedgerAudit"}
	slices.SortStableFunc(conds, func(a, b metav1.Condition) int { return rank(order, a.Type) - rank(order, b.Type) })
	for _, c := range conds {
		stale := ""
		if c.ObservedGeneration != casino.Generation {
			stale = fmt.Sprintf(" (generation %d)", c.ObservedGeneration)
		}
		p("%s\t%s\t%s\t%s\t%s%s\n", c.Type, c.Status, c.Reason, age(now, c.LastTransitionTime.Time), oneLine(c.Message, 200), stale)
	}
	p("\n")
	p("SIGNING KEY\tAGE\tROLE\n")
	for _, kid := range st.KeyIDs {
		role := "verifies"
		if kid == st.ActiveKeyID {
			role = "signs (active)"
		}
		created, err := time.Parse(accounts.KeyIDFormat, kid)
		a := "?"
		if err == nil {
			a = age(now, created)
		}
		p("%s\t%s\t%s\n", kid, a, role)
	}
	if st.NextRotation != nil {
		p("Next rotation\t%s\t(in %s)\n", st.NextRotation.UTC().Format(time.RFC3339), until(now, st.NextRotation.Time))
	}
	if st.LastForcedRotation != nil {
		p("Last forced rotation\t%s\t(rotate-keys-at)\n", st.LastForcedRotation.UTC().Format(time.RFC3339))
	}
	p("\n")
	if m := st.LastMigration; m != nil {
		done := "running or unknown"
		if m.CompletionTime != nil {
			done = m.CompletionTime.UTC().Format(time.RFC3339) + " (" + age(now, m.CompletionTime.Time) + " ago)"
		}
		p("Last migration\t%s\tjob %s, completed %s\n", m.Image, m.JobName, done)
	} else {
		p("Last migration\tnone recorded\n")
	}
	if a := st.LastLedgerAudit; a != nil {
		result := "FAILED"
		if a.Succeeded {
			result = "clean"
		}
		when := ""
		if a.CompletionTime != nil {
			when = ", " + age(now, a.CompletionTime.Time) + " ago"
		}
		p("Last ledger audit\t%s\tjob %s%s\n", result, a.JobName, when)
	} else if casino.Spec.LedgerAudit != nil {
		p("Last ledger audit\tnone finished yet\tschedule %q\n", casino.Spec.LedgerAudit.Schedule)
	}
	return tw.Flush()
}

// version is "current" or "current -> spec.image" while an upgrade is
// pending (or blocked).
func version(casino *casinov1alpha1.Casino) string {
	cur, want := casino.Status.CurrentImage, casino.Spec.Image
	switch {
	case cur == "":
		return want + " (not running yet)"
	case cur != want:
		return cur + " -> " + want + " (upgrade pending)"
	}
	return cur
}

func replicas(casino *casinov1alpha1.Casino) string {
	if casino.Spec.Replicas == nil {
		return "default"
	}
	return fmt.Sprint(*casino.Spec.Replicas)
}

func rank(order []string, t string) int {
	if i := slices.Index(order, t); i >= 0 {
		return i
	}
	return len(order)
}

// age is a kubectl-style age: 45s, 12m, 3h4m, 2d5h.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return short(now.Sub(t))
}

func until(now, t time.Time) string { return short(t.Sub(now)) }

func short(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		s = fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
	}
	if neg {
		return "-" + s
	}
	return s
}

// oneLine keeps a message on its row.
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > limit {
		return string(r[:limit-1]) + "…"
	}
	return s
}
