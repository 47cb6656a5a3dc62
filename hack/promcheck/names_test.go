package promcheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

const (
	dashboardFile = "../../charts/fairplay/dashboards/fairplay.json"
	rulesFile     = "../../charts/fairplay/rules/fairplay.rules.yaml"
)

var promParser = parser.NewParser(parser.Options{})

var (
	namesOnce sync.Once
	names     map[string]bool
	namesErr  error
)

// registeredNames are the metric names the code registers, as
// hack/metricnames (in the main module, built with its own dependency
// versions) prints them: the server's and the operator's. A histogram h
// also answers to h_bucket, h_sum and h_count.
func registeredNames(t *testing.T) map[string]bool {
	t.Helper()
	namesOnce.Do(func() {
		cmd := exec.Command("go", "run", "./hack/metricnames")
		cmd.Dir = "../.."
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			namesErr = err
			return
		}
		names = map[string]bool{}
		for _, n := range strings.Fields(string(out)) {
			names[n] = true
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				names[n+suffix] = true
			}
		}
	})
	if namesErr != nil {
		t.Fatalf("go run ./hack/metricnames: %v", namesErr)
	}
	if !names["fairplay_http_requests_total"] || !names["fairplay_operator_casino_condition"] {
		t.Fatalf("hack/metricnames printed %d names without the server's or the operator's", len(names))
	}
	return names
}

// grafanaVars are Grafana's variables, replaced by PromQL that parses.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h",
	"${namespace}", ".*", "$namespace", ".*")

// selectorNames parses expr and returns the metric names its selectors
// read (an error for PromQL that does not parse or a selector without a
// literal name).
func selectorNames(expr string) ([]string, error) {
	e, err := promParser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	var bad error
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			bad = &parser.ParseErr{Err: errNoName{vs.String()}}
			return nil
		}
		names = append(names, name)
		return nil
	})
	return names, bad
}

type errNoName struct{ sel string }

func (e errNoName) Error() string { return "selector " + e.sel + " names no metric" }

// dashboardExprs are every PromQL expression of the dashboard (panels,
// nested panels, and label_values() variable queries), keyed by where.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	out := map[string]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out["panel "+p.Title+" "+tg.RefID] = grafanaVars.Replace(tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)
	for _, v := range d.Templating.List {
		if m := labelValues.FindStringSubmatch(v.Definition); m != nil {
			out["variable "+v.Name] = grafanaVars.Replace(m[1])
		}
	}
	return out
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// ruleExprs are the alert rules' expressions, keyed by alert name; the
// file is parsed and validated (PromQL, durations, templates) as
// Prometheus loads it.
func ruleExprs(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(raw, false, model.UTF8Validation, promParser, nil)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", rulesFile, errs)
	}
	out := map[string]string{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Fatalf("%s: group %s has a recording rule %s; only alerts are expected", rulesFile, g.Name, r.Record)
			}
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

// unknownNames checks every expression: it must parse, and every metric it
// reads must be registered. It returns one line per problem.
func unknownNames(exprs map[string]string, registered map[string]bool) []string {
	var problems []string
	for where, expr := range exprs {
		names, err := selectorNames(expr)
		if err != nil {
			problems = append(problems, where+": "+err.Error())
			continue
		}
		for _, n := range names {
			if !registered[n] {
				problems = append(problems, where+": "+n+" is not a metric the server or the operator registers")
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// TestDashboardAndRulesUseRegisteredMetrics: every PromQL expression of the
// dashboard and of the alert rules parses with Prometheus's own parser and
// reads only metrics the code registers, so a renamed metric fails here
// instead of leaving an empty panel or an alert that can never fire.
func TestDashboardAndRulesUseRegisteredMetrics(t *testing.T) {
	registered := registeredNames(t)
	dash, rules := dashboardExprs(t), ruleExprs(t)
	if len(dash) < 20 || len(rules) < 6 {
		t.Fatalf("found %d dashboard and %d rule expressions: the files were not read as expected", len(dash), len(rules))
	}
	all := map[string]string{}
	for k, v := range dash {
		all[k] = v
	}
	for k, v := range rules {
		all[k] = v
	}
	for _, p := range unknownNames(all, registered) {
		t.Error(p)
	}
	t.Logf("%d dashboard expressions and %d alert rules parsed; %d registered names (with histogram series)", len(dash), len(rules), len(registered))
}

// TestCheckerCatchesUnknownNames: the check itself reports a metric nobody
// registers, PromQL that does not parse, and a nameless selector.
func TestCheckerCatchesUnknownNames(t *testing.T) {
	registered := registeredNames(t)
	problems := unknownNames(map[string]string{
		"typo":      `sum(rate(fairplay_http_request_total[5m]))`,
		"broken":    `sum(rate(fairplay_http_requests_total[5m])`,
		"nameless":  `count({namespace="x"})`,
		"fine":      `sum by (route) (rate(fairplay_http_requests_total[5m]))`,
		"histogram": `histogram_quantile(0.99, sum by (le) (rate(fairplay_http_request_duration_seconds_bucket[5m])))`,
	}, registered)
	want := []string{"broken:", "nameless:", "typo: fairplay_http_request_total"}
	if len(problems) != len(want) {
		t.Fatalf("problems = %q, want one each for %q", problems, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d = %q, want it to start with %q", i, problems[i], w)
		}
	}
}

// TestOperatorMetricsAreUsed: every fairplay_operator_* metric the operator
// registers feeds an alert or a dashboard panel, and the dashboard has its
// operator row.
func TestOperatorMetricsAreUsed(t *testing.T) {
	used := map[string]bool{}
	exprs := dashboardExprs(t)
	for k, v := range ruleExprs(t) {
		exprs[k] = v
	}
	for _, e := range exprs {
		names, _ := selectorNames(e)
		for _, n := range names {
			used[n] = true
		}
	}
	var ours []string
	for n := range registeredNames(t) {
		if strings.HasPrefix(n, "fairplay_operator_") && !strings.HasSuffix(n, "_bucket") && !strings.HasSuffix(n, "_sum") && !strings.HasSuffix(n, "_count") {
			ours = append(ours, n)
		}
	}
	slices.Sort(ours)
	if len(ours) < 4 {
		t.Fatalf("operator metrics = %v", ours)
	}
	for _, n := range ours {
		if !used[n] {
			t.Errorf("%s is registered but no alert or panel reads it", n)
		}
	}
	found := false
	for where := range dashboardExprs(t) {
		if strings.HasPrefix(where, "panel Casino conditions") {
			found = true
		}
	}
	if !found {
		t.Error("the dashboard has no \"Casino conditions\" panel")
	}
}
