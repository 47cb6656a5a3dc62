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
ns_out=$(render) cw_out=$(render --set operator.clusterWide=true)
if ! grep -qE '^kind: Cluster(Role|RoleBinding)$' <<<"$ns_out" && [ "$(grep -cE '^kind: Role(Binding)?$' <<<"$ns_out")" = 4 ] &&
  grep -q -- '- --watch-namespace=fairplay$' <<<"$ns_out"; then
  ok "namespaced mode (default): Roles only, --watch-namespace=fairplay ($(kinds <<<"$ns_out"))"
else bad "namespaced mode: $(kinds <<<"$ns_out")"; fi
if [ "$(grep -cE '^kind: Cluster(Role|RoleBinding)$' <<<"$cw_out")" = 2 ] && [ "$(grep -cE '^kind: Role(Binding)?$' <<<"$cw_out")" = 2 ] &&
  ! grep -q -- '--watch-namespace' <<<"$cw_out"; then
  ok "cluster-wide mode: ClusterRole + leader-election Role, no --watch-namespace ($(kinds <<<"$cw_out"))"
else bad "cluster-wide mode: $(kinds <<<"$cw_out")"; fi
# image.pullPolicy=Never (images imported into the node, no registry) reaches
# the operator and, through the Casino, its pods; casino.imagePullPolicy wins.
never=$(render --set image.pullPolicy=Never)
if [ "$(grep -c 'imagePullPolicy: Never' <<<"$never")" = 2 ]; then ok "image.pullPolicy=Never reaches the operator and the Casino"
else bad "image.pullPolicy=Never: $(grep -n 'imagePullPolicy' <<<"$never")"; fi
own=$(render --set image.pullPolicy=Never --set casino.imagePullPolicy=Always)
if grep -q 'imagePullPolicy: Always' <<<"$own" && [ "$(grep -c 'imagePullPolicy: Never' <<<"$own")" = 1 ]; then
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
  casino.name=Bad_Name image.pullPolicy=Sometimes casino.imagePullPolicy=Sometimes operator.clusterWide=maybe; do
  if "$helm" template fairplay "$chart" --kube-version "$kube" --set "$bad_value" >/dev/null 2>&1; then
    bad "schema accepted $bad_value"
  else ok "schema rejects $bad_value"; fi
done

echo "helm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
