// Package promcheck holds tests only: the Grafana dashboard's PromQL and the
// alert rules (charts/fairplay) parsed with the Prometheus library and
// checked against the metric names the server and the operator register,
// and the alert rules' unit tests (promtool's `test rules` format) run by
// the Prometheus engine. `make promcheck`, part of `make test`.
package promcheck
