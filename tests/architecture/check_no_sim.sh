#!/usr/bin/env bash
# The agent's path links no simulation code (docs/architecture.md). Usage: check_no_sim.sh
# AGENT_ONLY_BINARY FULL_BINARY. Counts the defined symbols of the scenario model, the simulated
# node, the fakes and the demo/simulate use cases in each: none in the first; some in the second,
# or the pattern has gone stale and would pass anything.
set -euo pipefail
agent=${1:?usage: check_no_sim.sh AGENT_ONLY FULL}
full=${2:?usage: check_no_sim.sh AGENT_ONLY FULL}
pattern='gpumeter::(scenario|sim|fake)::|kubelet::FakeKubelet|gpumeter::app::(RunDemo|RunSimulate|ScenarioNode|LoadScenario|Score)'
count() { nm -C --defined-only "$1" | grep -cE "$pattern" || true; }
in_agent=$(count "$agent")
in_full=$(count "$full")
if [ "$in_agent" -ne 0 ]; then
  echo "FAIL: $in_agent simulation symbols in $agent:" >&2
  nm -C --defined-only "$agent" | grep -E "$pattern" | head -20 >&2
  exit 1
fi
[ "$in_full" -gt 0 ] || { echo "FAIL: no simulation symbol in $full either: the pattern is stale" >&2; exit 1; }
echo "agent path: 0 simulation symbols ($in_full in the full binary)"
