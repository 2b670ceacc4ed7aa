#!/bin/sh
# symbols.sh: libdelayq exports exactly the functions src/delayq.h declares.
set -eu
lib=$1
root=${DQ_SOURCE_ROOT:?}
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort)
declared=$(grep -oE '\bdq_[a-z0-9_]+\s*\(' "$root/src/delayq.h" | tr -d ' (' | sort -u)
if [ "$exported" != "$declared" ]; then
  echo "symbols: exported and declared differ (< exported, > declared):" >&2
  printf '%s\n' "$exported" > /tmp/dq_sym_e.$$
  printf '%s\n' "$declared" > /tmp/dq_sym_d.$$
  diff /tmp/dq_sym_e.$$ /tmp/dq_sym_d.$$ >&2 || true
  rm -f /tmp/dq_sym_e.$$ /tmp/dq_sym_d.$$
  exit 1
fi
echo "symbols ok: $(printf '%s\n' "$exported" | wc -l) exported"
