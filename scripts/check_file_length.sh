#!/usr/bin/env bash
# Lists the C++ files in src/ (tests included) longer than N lines (default 600); exits 1 if any.
# A file that long holds more than one responsibility: split it along them.
# Usage: scripts/check_file_length.sh [N] [DIR]
set -euo pipefail
limit=${1:-600}
dir=${2:-$(dirname "$0")/../src}
long=$(find "$dir" \( -name '*.cpp' -o -name '*.h' \) -print0 | xargs -0 wc -l |
  awk -v n="$limit" '$2 != "total" && $1 > n { print $1, $2 }' | sort -rn)
if [ -n "$long" ]; then
  echo "files over $limit lines:"
  echo "$long"
  exit 1
fi
echo "file length: none over $limit lines"
