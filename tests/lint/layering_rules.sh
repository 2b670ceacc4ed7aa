#!/bin/sh
# layering_rules.sh: layering.py against small planted trees, so each rule is seen to
# fire (file, line, rule) and the lookalikes it must ignore are seen not to.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# A clean tree: each rank includes downwards; a lib-dir header found through src/lib/;
# the generated dq_scripts.h; lookalikes in comments and strings.
mk() {
  rm -rf "$tmp/t"
  mkdir -p "$tmp/t/src/lib" "$tmp/t/src/fmt" "$tmp/t/src/tui" "$tmp/t/src/cli"
  printf '#include <stdint.h>\n' >"$tmp/t/src/delayq.h"
  printf '#include "delayq.h"\n#include "dq_scripts.h"\n' >"$tmp/t/src/lib/buf.h"
  printf '#include "buf.h"\n/* redisReply is not named here */\n' >"$tmp/t/src/lib/buf.c"
  printf '#include <hiredis/hiredis.h>\nredisReply *r;\n' >"$tmp/t/src/lib/client.c"
  printf '#include "lib/buf.h"\n' >"$tmp/t/src/fmt/esc.h"
  printf '#include "fmt/esc.h"\n#include "buf.h"\n' >"$tmp/t/src/tui/grid.h"
  printf '#include "grid.h"\nconst char *s = "redisReply";\n' >"$tmp/t/src/tui/grid.c"
  printf '#include "tui/grid.h"\n// #include "nowhere.h"\n' >"$tmp/t/src/cli/cli.h"
  printf '#include "cli.h"\n' >"$tmp/t/src/cli/main.c"
}

# run NAME EXPECTED-STATUS PATTERN: the lint's output must match PATTERN (grep -E)
run() {
  set +e
  out=$(HIREDIS_ALLOW="src/lib/client.c" "${PYTHON:-python3}" "$here/layering.py" "$tmp/t")
  st=$?
  set -e
  if [ "$st" -ne "$2" ] || ! printf '%s\n' "$out" | grep -qE "$3"; then
    echo "FAIL $1: status $st (want $2), output:" >&2
    printf '%s\n' "$out" >&2
    fail=1
  else
    echo "ok $1"
  fi
}

mk
run clean 0 '^$'

mk
printf '#include "grid.h"\n#include "cli/cli.h"\n' >"$tmp/t/src/tui/grid.c"
run back-edge 1 '^src/tui/grid\.c:2: layering/back-edge: .*tui must not include cli'

mk
printf '#include "tui/grid.h"\n' >"$tmp/t/src/fmt/esc.c"
run back-edge-fmt 1 '^src/fmt/esc\.c:1: layering/back-edge: .*fmt must not include tui'

mk
printf '#include "env.h"\n' >"$tmp/t/src/lib/env.c"
printf '#include "lib/buf.h"\n#include "fmt/esc.h"\n' >"$tmp/t/src/lib/env.h"
run back-edge-lib 1 '^src/lib/env\.h:2: layering/back-edge: #include "fmt/esc\.h"'

mk
printf '#include "dq_scripts.h"\n#include "fmt/esc.h"\n' >"$tmp/t/src/delayq.h"
run public-header 1 '^src/delayq\.h:2: layering/back-edge: .*lib must not include fmt'

mk
printf '#include "grid.h"\n' >"$tmp/t/src/tui/app.h"
printf '#include "fmt/esc.h"\n#include "app.h"\n' >"$tmp/t/src/tui/grid.c"
run cycle 1 'layering/cycle: src/tui/app -> src/tui/grid -> src/tui/app'

mk
printf '#include "view.h"\n' >"$tmp/t/src/tui/app.c"
printf '#include "model.h"\n' >"$tmp/t/src/tui/view.c"
printf '#include "app.h"\n' >"$tmp/t/src/tui/model.c"
: >"$tmp/t/src/tui/app.h"
: >"$tmp/t/src/tui/view.h"
: >"$tmp/t/src/tui/model.h"
run cycle-transitive 1 'layering/cycle: src/tui/app -> src/tui/view -> src/tui/model -> src/tui/app'

mk
printf '#include "fmt/esc.h"\nstatic redisReply *r;\n' >"$tmp/t/src/fmt/esc.c"
run hiredis-reply 1 '^src/fmt/esc\.c:2: layering/hiredis: redisReply'

mk
printf '#include <hiredis.h>\n' >"$tmp/t/src/lib/buf.c"
run hiredis-include 1 '^src/lib/buf\.c:1: layering/hiredis: #include <hiredis\.h>'

mk
printf '#include "nowhere.h"\n' >"$tmp/t/src/cli/main.c"
run unresolved 1 '^src/cli/main\.c:1: layering/unresolved: #include "nowhere\.h"'

exit $fail
