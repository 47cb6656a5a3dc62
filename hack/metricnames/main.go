// Command metricnames prints, one per line, the name of every metric the
// Fairplay server and the operator register (a histogram h also as
// h_bucket, h_sum and h_count). hack/promcheck runs it to check the
// dashboard's and the alert rules' PromQL against the code; it lives in the
// main module so the names come from the code as built, with the main
// module's own dependency versions.
package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	// Registers the operator's fairplay_operator_* metrics on
	// controller-runtime's registry, beside controller-runtime's own.
	_ "github.com/fairplay/fairplay/internal/controller"
	"github.com/fairplay/fairplay/internal/telemetry"
)

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func main() {
	// The server's registry with every collector internal/app and
	// internal/server register; describing needs no database.
	m := telemetry.NewMetrics()
	m.RegisterReadiness(func() bool { return true })
	m.RegisterPools(nil, nil)
	m.RegisterBetBatches(func() telemetry.BetBatchStats { return telemetry.BetBatchStats{} })
	m.RegisterActionBatches(func() telemetry.BetBatchStats { return telemetry.BetBatchStats{} })
	m.RegisterGameActions(func() telemetry.GameActionStats { return telemetry.GameActionStats{} })
	m.RegisterActivity(nil, 0)
	op, ok := metrics.Registry.(prometheus.Collector)
	if !ok {
		fmt.Fprintf(os.Stderr, "metricnames: controller-runtime's registry %T cannot be described\n", metrics.Registry)
		os.Exit(1)
	}
	var names []string
	for _, c := range []prometheus.Collector{m.Registry, op} {
		ch := make(chan *prometheus.Desc, 1024)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if sub := fqName.FindStringSubmatch(d.String()); sub != nil {
				names = append(names, sub[1])
			}
		}
	}
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		fmt.Println(n)
	}
}
