#!/usr/bin/env bash
# Fails when an include in src/ points against the pipeline's arrows (docs/architecture.md):
#   common -> domain -> sources -> core -> node -> sinks -> app -> cli, with sim/ beside them;
#   sources/history (readers of stored usage, in core's types) -> core; store -> core;
#   store/writer (what records NodeState's intervals into the store) -> store, node/state.
# The build already refuses an include of a module a target does not link (cmake/modules.cmake);
# this check also holds the arrows between layers that the link lists could let slip, and it
# covers the tests. Usage: check_layers.sh SRC_DIR. Prints every offending line; exit 1 if any.
set -euo pipefail
src=${1:?usage: check_layers.sh SRC_DIR}
cd "$src"

# What each top folder (or a module named here) may include, besides itself, system headers and
# libraries.
declare -A allowed=(
  [common]=""
  [domain]="common"
  [sources]="common domain"
  [sources/history]="common domain core"
  [core]="common domain"
  [store]="common domain core"
  [store/writer]="common domain core store node/state"
  [node]="common domain sources core"
  [sinks]="common domain core node/state"
  # The simulated node's outputs: beside the product's sinks, they may read the scores and the
  # scenario (linked by app_sim only, never on the agent's path).
  [sinks/sim]="common domain core node/state sim/scenario sim/score"
  [app]="common domain sources core store node sinks sim/scenario sim/node sim/score"
  [cli]="common app"
  [sim]="common domain sources sim core/allocation"
  # simulate's scoring judges the accountant's ledgers against the scenario's truth.
  [sim/score]="common domain sim core/attribution"
)
# Narrower rules inside a layer: one module that must not see another of its layer.
declare -A forbidden=(
  [sources/history]="sources/nvml sources/sampler sources/kubelet sources/kube_api sources/pods sources/node
                     sources/slices sources/proc sources/dcgm core/allocation"
  # NodeState holds the node's facts and owners, never a live source (the API-server and file
  # variants share their input's folder, so they are named one by one).
  [node/state]="node/pipeline sources/sampler sources/kubelet sources/kube_api sources/nvml
                sources/pods/pod_source sources/pods/api_server_source sources/node/node_source
                sources/proc/process_source
                sources/slices/resource_slice_source sources/slices/slices_file_source"
  [sinks]="node/pipeline sources/"
)

status=0
while IFS= read -r -d '' file; do
  rel=${file#./}
  top=${rel%%/*}
  second=${rel#*/}
  second=$top/${second%%/*}
  [ -n "${allowed[$second]+x}" ] && key=$second || key=$top
  [ -n "${allowed[$key]+x}" ] || continue
  # A module's tests may also use the fakes and the simulated node.
  extra=""
  case "$rel" in */tests/*) extra="sim sources node core store sinks app" ;; esac
  while IFS= read -r line; do
    inc=${line#*\"}
    inc=${inc%%\"*}
    case "$inc" in */*) ;; *) continue ;; esac
    inc_top=${inc%%/*}
    [ -d "$inc_top" ] || continue  # not one of ours (e.g. podresources/v1/api.pb.h)
    [ "$inc_top" = "$top" ] && ok=1 || ok=0
    # Inside sources/, a module other than history may not see history (it sits above core).
    [ "$key" = sources ] && case "$inc" in sources/history/*) ok=0 ;; esac
    for a in ${allowed[$key]} $extra; do
      case "$inc" in "$a"/*) ok=1 ;; esac
    done
    if [ -z "$extra" ]; then
      for scope in "${!forbidden[@]}"; do
        case "$rel" in "$scope"/*)
          for f in ${forbidden[$scope]}; do
            case "$inc" in "$f"*) ok=0 ;; esac
          done ;;
        esac
      done
    fi
    if [ "$ok" = 0 ]; then
      echo "$rel: includes \"$inc\" against the layers (docs/architecture.md)"
      status=1
    fi
  done < <(grep -E '^#include "' "$file" || true)
done < <(find . -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.in' \) -print0)
# Every outbound HTTP request goes through the one client (common/http/client.h): its deadline,
# cap, TLS and no-redirect rules hold only if nothing else makes a request. Tests may.
while IFS= read -r hit; do
  echo "$hit: an HTTP client outside common/http (use gpumeter::http::Client)"
  status=1
done < <(grep -rnE 'httplib::(Client|SSLClient|ClientImpl)\b' --include='*.h' --include='*.cpp' . |
         grep -vE '^\./(common/http/|[^:]*/tests/)' | cut -d: -f1,2 || true)
[ "$status" = 0 ] && echo "layers: every include follows the arrows; one HTTP client"
exit $status
