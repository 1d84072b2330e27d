# Shared by the end-to-end scripts (sourced).

# wait_for_match FILE SED_EXPR: waits up to 10 s for `sed -n SED_EXPR FILE` to print something,
# and prints it.
wait_for_match() {
  local file=$1 expr=$2 value=""
  for _ in $(seq 1 100); do
    value=$(sed -n "$expr" "$file" 2>/dev/null | head -1)
    [ -n "$value" ] && break
    sleep 0.1
  done
  printf '%s' "$value"
}

# start_fake_node FAKE_NODE SCENARIO DIR START_S: the scenario's node from scenario second START_S
# (kubelet socket, pods file, /proc and the fake NVML's state under DIR, its log DIR.log), started
# in this shell (a job of the caller's, its pid in $fake_node_pid), ready when its kubelet socket
# is. Returns 1 when that takes over 10 s. The fake NVML's GPUMETER_FAKE_NVML_SCENARIO and _START_S
# are the caller's environment.
start_fake_node() {
  local node=$1 scenario=$2 dir=$3 start=$4
  "$node" "$scenario" "$dir" "$start" >"$dir.log" 2>&1 &
  fake_node_pid=$!
  for _ in $(seq 1 100); do [ -S "$dir/kubelet.sock" ] && return 0; sleep 0.1; done
  return 1
}

# free_port: prints a loopback port nobody listens on, below the kernel's ephemeral range (which
# the local ends of other tests' connections take). Another process may still take it before the
# caller binds: callers that can, try again.
free_port() {
  local low p
  low=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 12000 ] || low=32768
  for _ in $(seq 1 50); do
    p=$((10000 + RANDOM % (low - 10000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

# start_prometheus WORK RULES TARGET...: a real Prometheus on a free loopback port, scraping the
# targets (host:port) every second with the rule file RULES ('' for none), its data and log under
# WORK; started in this shell (a job of the caller's), ready when it returns. Sets $api (its URL)
# and defines query PROMQL (the JSON of an instant query). Returns 1 when it cannot start.
start_prometheus() {
  local work=$1 rules=$2 port pid
  shift 2
  local targets
  targets=$(printf '"%s", ' "$@")
  {
    echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
    [ -z "$rules" ] || echo "rule_files: [\"$rules\"]"
    echo "scrape_configs:"
    echo "  - job_name: gpumeter"
    echo "    static_configs: [{targets: [${targets%, }]}]"
  } >"$work/prometheus.yml"
  # A port taken between the check and Prometheus's bind (tests run in parallel) is tried again
  # with another.
  for _ in $(seq 1 5); do
    port=$(free_port) || { echo "no free port" >&2; return 1; }
    prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
      --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
    pid=$!
    api="http://127.0.0.1:$port"
    for _ in $(seq 1 150); do
      curl -fs "$api/-/ready" >/dev/null 2>&1 && return 0
      kill -0 "$pid" 2>/dev/null || break  # exited: the port was taken meanwhile
      sleep 0.2
    done
    grep -q "address already in use" "$work/prometheus.log" || break
    wait "$pid" 2>/dev/null || true
  done
  curl -fs "$api/-/ready" >/dev/null || { echo "prometheus did not start" >&2; return 1; }
}
query() { curl -fsS --get "$api/api/v1/query" --data-urlencode "query=$1"; }
