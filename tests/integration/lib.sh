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
