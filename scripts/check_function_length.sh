#!/usr/bin/env bash
# Lists the functions in src/ longer than N lines (default 80), measured by Universal Ctags from
# the definition's first line to its closing brace (tests included); exits 1 if there is any.
# Usage: scripts/check_function_length.sh [N] [DIR]
set -euo pipefail
limit=${1:-80}
dir=${2:-$(dirname "$0")/../src}
ctags=$(command -v ctags-universal || command -v ctags || true)
[ -n "$ctags" ] || { echo "check_function_length: universal-ctags not installed (scripts/setup.sh)" >&2; exit 2; }
long=$("$ctags" -R --languages=C++ --kinds-C++=f --fields=+ne -x \
  --_xformat='%{end} %{line} %{input} %{name}' "$dir" |
  awk -v n="$limit" '$1 - $2 + 1 > n { print $1 - $2 + 1, $3 ":" $2, $4 }' | sort -rn)
if [ -n "$long" ]; then
  echo "functions over $limit lines:"
  echo "$long"
  exit 1
fi
echo "function length: none over $limit lines"
