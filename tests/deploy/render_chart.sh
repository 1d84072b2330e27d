#!/usr/bin/env bash
# Renders the Helm chart (deploy/helm/gpumeter) for one named case, with `helm template`, to
# stdout: the cases that stand for the kustomize overlays (base, time-slicing, mps, dra, dcgm,
# monitoring) and the other values the chart takes (store off, a pinned digest, a guard config, a
# priority class, pull secrets, an existing device plugin ConfigMap). The one list of cases,
# used by manifests_test (every check the overlays pass) and chart_test.sh (equal objects).
# Usage: render_chart.sh CASE; GPUMETER_HELM names the helm binary (default: helm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kustomize=$root/deploy/kubernetes
helm=${GPUMETER_HELM:-helm}
args=(--set image.repository=gpumeter)
case ${1:?usage: render_chart.sh CASE} in
  base) ;;
  time-slicing | mps)
    args+=(--set "sharing.mode=$1"
      --set-file "sharing.devicePluginConfig=$kustomize/overlays/$1/device-plugin-config.yaml") ;;
  dra) args+=(--set dra.enabled=true) ;;
  dcgm) args+=(--set dcgm.enabled=true) ;;
  monitoring) args+=(--set serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true) ;;
  store-off) args+=(--set store.enabled=false) ;;
  pinned)
    args+=(--set image.repository=registry.example.com/gpumeter
      --set image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
      --set 'imagePullSecrets[0].name=registry') ;;
  everything)
    args+=(--set sharing.mode=mps --set sharing.existingConfigMap=nvidia-device-plugin-config
      --set dra.enabled=true --set dcgm.enabled=true --set store.minuteDays=30
      --set-string guard.content='idle: {window: 30m}' --set priorityClassName=system-node-critical
      --set cost.policy=blend:0.3 --set cost.idle=separate --set 'extraArgs[0]=--pod-label=team'
      --set 'extraArgs[1]=--container-series=full'
      --set serviceMonitor.enabled=true --set serviceMonitor.labels.release=kps
      --set prometheusRule.enabled=true --set prometheusRule.labels.release=kps
      --set dashboard.enabled=true --set createNamespace=true) ;;
  *) echo "render_chart.sh: no case '$1'" >&2; exit 2 ;;
esac
exec "$helm" template gpumeter "$root/deploy/helm/gpumeter" --namespace gpumeter "${args[@]}"
