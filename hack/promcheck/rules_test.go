package promcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"go.yaml.in/yaml/v3"
)

const rulesTestFile = "../../charts/fairplay/rules/fairplay.rules.test.yaml"

// The subset of promtool's `test rules` file format the alert tests use:
// https://prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules/
type testFile struct {
	RuleFiles          []string       `yaml:"rule_files"`
	EvaluationInterval model.Duration `yaml:"evaluation_interval"`
	Tests              []testGroup    `yaml:"tests"`
}

type testGroup struct {
	Interval    model.Duration `yaml:"interval"`
	InputSeries []struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	} `yaml:"input_series"`
	AlertRuleTests []struct {
		EvalTime  model.Duration `yaml:"eval_time"`
		Alertname string         `yaml:"alertname"`
		ExpAlerts []struct {
			ExpLabels map[string]string `yaml:"exp_labels"`
		} `yaml:"exp_alerts"`
	} `yaml:"alert_rule_test"`
}

// alertRule is one alerting rule of the rule files.
type alertRule struct {
	name   string
	expr   string
	hold   time.Duration
	labels labels.Labels
}

func loadRules(t *testing.T, dir string, files []string) map[string]alertRule {
	t.Helper()
	out := map[string]alertRule{}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		groups, errs := rulefmt.Parse(raw, false, model.UTF8Validation, promParser, nil)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f, errs)
		}
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				out[r.Alert] = alertRule{name: r.Alert, expr: r.Expr, hold: time.Duration(r.For), labels: labels.FromMap(r.Labels)}
			}
		}
	}
	return out
}

// firingAt evaluates rule every interval from 0 to at (as Prometheus's rule
// manager does, with the `for` clock) over storage, and returns the label
// sets of the alerts firing at at, each rendered as a sorted string.
func firingAt(ctx context.Context, ll *promqltest.LazyLoader, ar alertRule, interval, at time.Duration) ([]string, error) {
	expr, err := promParser.ParseExpr(ar.expr)
	if err != nil {
		return nil, err
	}
	rule := rules.NewAlertingRule(ar.name, expr, ar.hold, 0, ar.labels, labels.EmptyLabels(), labels.EmptyLabels(), "", true, nil)
	query := rules.EngineQueryFunc(ll.QueryEngine(), ll.Queryable())
	for ts := time.Duration(0); ts <= at; ts += interval {
		if _, err := rule.Eval(ctx, 0, time.Unix(0, 0).UTC().Add(ts), query, nil, 0); err != nil {
			return nil, fmt.Errorf("eval at %s: %w", ts, err)
		}
	}
	var out []string
	for _, a := range rule.ActiveAlerts() {
		if a.State == rules.StateFiring {
			out = append(out, a.Labels.String())
		}
	}
	slices.Sort(out)
	return out, nil
}

// expected renders a test's exp_labels as firingAt does: the alert's
// labels are its series' labels, the rule's labels and alertname.
func expected(alertname string, exp []map[string]string) []string {
	var out []string
	for _, l := range exp {
		m := map[string]string{"alertname": alertname}
		for k, v := range l {
			m[k] = v
		}
		out = append(out, labels.FromMap(m).String())
	}
	slices.Sort(out)
	return out
}

// TestAlertRules runs fairplay.rules.test.yaml: for each case the input
// series (promtool's expanding notation, e.g. '1x4 0x30') are loaded at the
// case's interval, each named alert is evaluated every evaluation_interval
// up to eval_time, and the firing alerts must be exactly exp_alerts. Every
// alert of the rule files must be tested both firing and silent.
func TestAlertRules(t *testing.T) {
	raw, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var tf testFile
	if err := yaml.Unmarshal(raw, &tf); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	all := loadRules(t, filepath.Dir(rulesTestFile), tf.RuleFiles)
	evalEvery := time.Duration(tf.EvaluationInterval)
	if evalEvery == 0 {
		evalEvery = time.Minute
	}
	fired, silent := map[string]int{}, map[string]int{}
	cases := 0
	for i, tg := range tf.Tests {
		var load strings.Builder
		fmt.Fprintf(&load, "load %s\n", time.Duration(tg.Interval))
		for _, s := range tg.InputSeries {
			fmt.Fprintf(&load, "  %s %s\n", s.Series, s.Values)
		}
		ll, err := promqltest.NewLazyLoader(load.String(), promqltest.LazyLoaderOpts{EnableAtModifier: true, EnableNegativeOffset: true, Parser: promParser})
		if err != nil {
			t.Fatalf("test %d: input series: %v", i, err)
		}
		ll.WithSamplesTill(time.Unix(0, 0).Add(maxEval(tg)+time.Minute), func(err error) {
			if err != nil {
				t.Fatalf("test %d: load: %v", i, err)
			}
		})
		for _, at := range tg.AlertRuleTests {
			ar, ok := all[at.Alertname]
			if !ok {
				t.Fatalf("test %d: no alert %s in %v", i, at.Alertname, tf.RuleFiles)
			}
			var exp []map[string]string
			for _, e := range at.ExpAlerts {
				exp = append(exp, e.ExpLabels)
			}
			got, err := firingAt(t.Context(), ll, ar, evalEvery, time.Duration(at.EvalTime))
			if err != nil {
				t.Fatalf("test %d %s: %v", i, at.Alertname, err)
			}
			want := expected(at.Alertname, exp)
			cases++
			if !slices.Equal(got, want) {
				t.Errorf("test %d: %s at %s:\n  firing   %v\n  expected %v", i, at.Alertname, time.Duration(at.EvalTime), got, want)
				continue
			}
			if len(want) > 0 {
				fired[at.Alertname]++
			} else {
				silent[at.Alertname]++
			}
		}
		_ = ll.Close()
	}
	for name := range all {
		if fired[name] == 0 || silent[name] == 0 {
			t.Errorf("alert %s: %d passing cases where it fires and %d where it stays silent; want at least one of each", name, fired[name], silent[name])
		}
	}
	t.Logf("%d alert rule cases over %d alerts passed (promtool test format, Prometheus engine)", cases, len(all))
}

func maxEval(tg testGroup) time.Duration {
	var m time.Duration
	for _, at := range tg.AlertRuleTests {
		m = max(m, time.Duration(at.EvalTime))
	}
	return m
}
