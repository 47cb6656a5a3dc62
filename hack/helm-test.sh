#!/usr/bin/env bash
# Checks the Helm chart (charts/fairplay): its copies of the generated CRD and
# manager role are fresh, `helm lint --strict` passes with the default and
# the fully-populated values (ci/full-values.yaml), `helm template` renders
# both, and values.schema.json rejects unknown keys at the top and nested.
# The envtest suite (internal/controller/helm_test.go) then creates the
# rendered objects in a real API server. Ends with one `N passed, N failed`
# line.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/tools.sh helm
helm=bin/helm
chart=charts/fairplay
kube=1.36.3 # helm built from source defaults to an old Kubernetes version
out=.data/test/helm
mkdir -p "$out"
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# The chart's copies of generated files (`make chart-crds`), never edited.
for pair in "config/crd/bases/casino.fairplay.dev_casinos.yaml:$chart/crds/casino.fairplay.dev_casinos.yaml" \
  "config/rbac/role.yaml:$chart/files/manager-role.yaml"; do
  src=${pair%%:*} dst=${pair#*:}
  if cmp -s "$src" "$dst"; then ok "$dst matches $src"; else bad "$dst differs from $src: run 'make chart-crds'"; fi
done
# Like check-generated: `make manifests` refreshes the copies in the work
# tree, so a stale committed copy shows up as a change against git.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  if git diff --quiet -- "$chart/crds" "$chart/files"; then ok "committed chart copies are fresh"
  else bad "committed chart copies are stale: run 'make manifests' and commit"; git --no-pager diff --stat -- "$chart/crds" "$chart/files"; fi
fi

for values in default full; do
  args=()
  [ "$values" = full ] && args=(-f "$chart/ci/full-values.yaml")
  if "$helm" lint --strict "$chart" --kube-version "$kube" "${args[@]}" >"$out/lint-$values.txt" 2>&1; then ok "helm lint ($values values)"
  else bad "helm lint ($values values)"; cat "$out/lint-$values.txt"; fi
  if "$helm" template fairplay "$chart" --namespace fairplay --include-crds --kube-version "$kube" "${args[@]}" \
    >"$out/template-$values.yaml" 2>"$out/template-$values.err"; then
    ok "helm template ($values values): $(wc -c <"$out/template-$values.yaml") bytes, $(wc -l <"$out/template-$values.yaml") lines, $(grep -c '^kind:' "$out/template-$values.yaml") objects"
  else bad "helm template ($values values)"; cat "$out/template-$values.err"; fi
done

# Install modes (operator.clusterWide): the operator's rules become a Role in
# the release namespace plus --watch-namespace, or a ClusterRole. The envtest
# suite runs the operator under the namespaced Role.
render() { "$helm" template fairplay "$chart" --namespace fairplay --kube-version "$kube" "$@"; }
kinds() { grep -E '^kind: ' | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }
# (The CRD-upgrade hook's and the secure metrics' ClusterRoles are checked
# separately below.)
ns_out=$(render --set crds.upgrade=false --set operator.metrics.secure=false)
cw_out=$(render --set operator.clusterWide=true --set crds.upgrade=false --set operator.metrics.secure=false)
if ! grep -qE '^kind: Cluster(Role|RoleBinding)$' <<<"$ns_out" && [ "$(grep -cE '^kind: Role(Binding)?$' <<<"$ns_out")" = 4 ] &&
  grep -q -- '- --watch-namespace=fairplay$' <<<"$ns_out"; then
  ok "namespaced mode (default): Roles only, --watch-namespace=fairplay ($(kinds <<<"$ns_out"))"
else bad "namespaced mode: $(kinds <<<"$ns_out")"; fi
if [ "$(grep -cE '^kind: Cluster(Role|RoleBinding)$' <<<"$cw_out")" = 2 ] && [ "$(grep -cE '^kind: Role(Binding)?$' <<<"$cw_out")" = 2 ] &&
  ! grep -q -- '--watch-namespace' <<<"$cw_out"; then
  ok "cluster-wide mode: ClusterRole + leader-election Role, no --watch-namespace ($(kinds <<<"$cw_out"))"
else bad "cluster-wide mode: $(kinds <<<"$cw_out")"; fi
# CRD upgrades: Helm installs crds/ but never upgrades it, so a pre-upgrade
# hook Job applies the chart's crds/ (carried in a hook ConfigMap, byte for
# byte) with a ClusterRole that can only get and patch that one CRD.
hook=$(render --show-only templates/crd-upgrade.yaml)
crd_name=$(grep -m1 '^  name: ' "$chart/crds/casino.fairplay.dev_casinos.yaml" | awk '{print $2}')
embedded=$(awk '/^  casino.fairplay.dev_casinos.yaml: \|$/{f=1;next} f&&/^---/{exit} f&&/^[^ ]/{exit} f{sub(/^    /,"");print}' <<<"$hook")
if [ "$embedded" = "$(cat "$chart/crds/casino.fairplay.dev_casinos.yaml")" ]; then ok "crd-upgrade hook carries crds/ byte for byte"
else bad "crd-upgrade hook ConfigMap differs from crds/"; fi
if [ "$(grep -c 'helm.sh/hook: pre-upgrade' <<<"$hook")" = 5 ] && ! grep -q 'pre-install\|post-' <<<"$hook" &&
  grep -q -- "- $crd_name\$" <<<"$hook" && grep -q 'verbs: \[get, patch\]' <<<"$hook" &&
  [ "$(grep -c 'verbs:' <<<"$hook")" = 1 ] && grep -q 'command: \[/operator, apply-crds, -f, /crds\]' <<<"$hook"; then
  ok "crd-upgrade hook: 5 pre-upgrade objects, get/patch on $crd_name only, runs operator apply-crds"
else bad "crd-upgrade hook: $(grep -nE 'hook:|verbs|resourceNames|command' <<<"$hook")"; fi
if [ "$(render --set crds.upgrade=false | grep -c 'component: crd-upgrade')" = 0 ]; then ok "crds.upgrade=false renders no hook"
else bad "crds.upgrade=false still renders the hook"; fi

# Operator metrics secured the kubebuilder v4 way: HTTPS with the
# authentication/authorization filter, a ClusterRole to review tokens, a
# metrics-reader ClusterRole; secure=false binds plain HTTP to loopback only.
sec=$(render --show-only templates/metrics.yaml --set 'operator.metrics.readers[0].name=prom' --set 'operator.metrics.readers[0].namespace=monitoring')
dep=$(render --show-only templates/deployment.yaml)
if grep -q -- '--metrics-secure=true' <<<"$dep" && grep -q -- '--metrics-bind-address=:8443' <<<"$dep" &&
  grep -q 'resources: \[tokenreviews\]' <<<"$sec" && grep -q 'resources: \[subjectaccessreviews\]' <<<"$sec" &&
  grep -q 'nonResourceURLs: \[/metrics\]' <<<"$sec" && grep -q 'name: prom$' <<<"$sec" && grep -q 'port: 8443' <<<"$sec"; then
  ok "operator metrics (default): HTTPS :8443 with authn/authz, token and access reviews, metrics-reader bound to readers"
else bad "operator metrics (default): $(grep -nE 'metrics-|resources:|nonResourceURLs|port:' <<<"$dep$sec")"; fi
plain=$(render --set operator.metrics.secure=false)
if grep -q -- '--metrics-bind-address=127.0.0.1:8080' <<<"$plain" && ! grep -q 'tokenreviews' <<<"$plain" &&
  ! grep -q 'name: fairplay-operator-metrics$' <<<"$plain"; then
  ok "operator.metrics.secure=false: plain HTTP on loopback only, no Service, no cluster RBAC"
else bad "operator.metrics.secure=false: $(grep -nE 'metrics-bind|tokenreviews|operator-metrics' <<<"$plain")"; fi

# Alerts: the PrometheusRule carries every rule of rules/fairplay.rules.yaml
# (hack/promcheck unit-tests them), with additionalLabels on each.
pr=$(render --set prometheusRule.enabled=true --set prometheusRule.additionalLabels.team=casino --show-only templates/prometheusrule.yaml)
want_alerts=$(grep -c '^      - alert: ' "$chart/rules/fairplay.rules.yaml")
if [ "$(grep -c -- '- alert: ' <<<"$pr")" = "$want_alerts" ] && [ "$(grep -c 'team: casino' <<<"$pr")" = "$want_alerts" ] &&
  grep -q '{{ $labels.namespace }}' <<<"$pr"; then ok "PrometheusRule: all $want_alerts alerts of rules/fairplay.rules.yaml, extra labels on each, Prometheus templates intact"
else bad "PrometheusRule: $(grep -c -- '- alert: ' <<<"$pr") alerts, want $want_alerts"; fi
if [ "$(render | grep -c '^kind: PrometheusRule$')" = 0 ]; then ok "no PrometheusRule by default (needs prometheus-operator's CRDs)"
else bad "PrometheusRule rendered by default"; fi

# Isolation by default: a NetworkPolicy for the operator and one for the
# Casino's pods, each denying both directions but what is listed; opt-out;
# an operator PodDisruptionBudget only with more than one replica.
def=$(render)
if [ "$(grep -c '^kind: NetworkPolicy$' <<<"$def")" = 2 ] && [ "$(grep -c 'policyTypes: \[Ingress, Egress\]' <<<"$def")" = 2 ] &&
  grep -q 'port: 5432' <<<"$def" && grep -q 'port: 6379' <<<"$def" && grep -q 'port: 6443' <<<"$def"; then
  ok "networkPolicy (default): operator and server policies, ingress and egress, DB/Redis/API-server ports"
else bad "networkPolicy (default): $(grep -nE '^kind: NetworkPolicy|policyTypes|port:' <<<"$def")"; fi
if [ "$(render --set networkPolicy.enabled=false | grep -c '^kind: NetworkPolicy$')" = 0 ]; then ok "networkPolicy.enabled=false renders none"
else bad "networkPolicy.enabled=false still renders NetworkPolicies"; fi
if render --set networkPolicy.dns.namespaceSelector=null --set networkPolicy.dns.podSelector=null >/dev/null 2>"$out/np.err"; then
  bad "an empty networkPolicy peer rendered"
elif grep -q 'needs a namespaceSelector or a podSelector' "$out/np.err"; then ok "an empty networkPolicy peer fails with a clear error"
else bad "empty peer failed for another reason: $(cat "$out/np.err")"; fi
two=$(render --set operator.replicas=2)
if ! grep -q '^kind: PodDisruptionBudget$' <<<"$def" && [ "$(grep -c '^kind: PodDisruptionBudget$' <<<"$two")" = 1 ]; then
  ok "operator PodDisruptionBudget only with operator.replicas > 1"
else bad "operator PodDisruptionBudget: $(grep -c '^kind: PodDisruptionBudget$' <<<"$two") with 2 replicas"; fi

# image.pullPolicy=Never (images imported into the node, no registry) reaches
# the operator and, through the Casino, its pods; casino.imagePullPolicy wins.
never=$(render --set image.pullPolicy=Never)
if [ "$(grep -c 'imagePullPolicy: Never' <<<"$never")" = 3 ]; then ok "image.pullPolicy=Never reaches the operator, its CRD-upgrade hook and the Casino"
else bad "image.pullPolicy=Never: $(grep -n 'imagePullPolicy' <<<"$never")"; fi
own=$(render --set image.pullPolicy=Never --set casino.imagePullPolicy=Always)
if grep -q 'imagePullPolicy: Always' <<<"$own" && [ "$(grep -c 'imagePullPolicy: Never' <<<"$own")" = 2 ]; then
  ok "casino.imagePullPolicy overrides image.pullPolicy for the Casino"
else bad "casino.imagePullPolicy: $(grep -n 'imagePullPolicy' <<<"$own")"; fi

# values.schema.json: unknown keys fail at every level.
for key in bogus=1 operator.bogus=1 casino.ingress.bogus=1 operator.metrics.serviceMonitor.bogus=1; do
  if "$helm" template fairplay "$chart" --kube-version "$kube" --set "$key" >/dev/null 2>"$out/schema.err"; then
    bad "schema accepted unknown key ${key%%=*}"
  elif grep -q "additional properties" "$out/schema.err"; then ok "schema rejects unknown key ${key%%=*}"
  else bad "schema rejected ${key%%=*} for another reason: $(cat "$out/schema.err")"; fi
done
# ...and wrong types or values.
for bad_value in casino.replicas=-1 casino.signingKeys.rotationInterval=daily casino.signingKeys.activationDelay=-1m \
  casino.name=Bad_Name casino.ledgerAudit.schedule=hourly image.pullPolicy=Sometimes casino.imagePullPolicy=Sometimes operator.clusterWide=maybe; do
  if "$helm" template fairplay "$chart" --kube-version "$kube" --set "$bad_value" >/dev/null 2>&1; then
    bad "schema accepted $bad_value"
  else ok "schema rejects $bad_value"; fi
done

# Several operator replicas without leader election would all reconcile.
if "$helm" template fairplay "$chart" --kube-version "$kube" --set operator.replicas=3 --set operator.leaderElection=false \
  >/dev/null 2>&1; then bad "schema accepted operator.replicas=3 without leaderElection"
else ok "schema rejects operator.replicas=3 without leaderElection"; fi
if "$helm" template fairplay "$chart" --kube-version "$kube" --set operator.replicas=3 >/dev/null 2>&1; then
  ok "schema accepts operator.replicas=3 with leaderElection"
else bad "schema rejected operator.replicas=3 with leaderElection"; fi

echo "helm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
