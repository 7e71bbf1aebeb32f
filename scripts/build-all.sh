#!/usr/bin/env bash
# Release build of the addon for every target this Linux machine can build,
# each placed in its platform package: npm/<platform>/condense-native.<platform>.node.
# The release workflow runs this same script for the same six targets; only
# the two Windows binaries are built elsewhere (on Windows runners).
#
#   npm run build:all                        # all six
#   bash scripts/build-all.sh linux-arm64-gnu darwin-arm64   # some of them
#
# Every target goes through `napi build -x` (cargo-zigbuild, zig as the C
# compiler and linker): glibc targets against glibc 2.17's symbols (see
# scripts/xbuild/targets.js), musl targets dynamically against musl's libc,
# macOS targets against zig's libSystem stubs. scripts/xbuild/tools.sh
# installs the toolchain first (only what is missing).
#
# Each platform has its own cargo target directory, $XBUILD_TARGET_DIR/<platform>
# (default target/xbuild), so a rebuild after a source change recompiles only
# the crate itself. .ci/run points it at the machine's cache, outside the clone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# shellcheck source=scripts/xbuild/tools.sh
source scripts/xbuild/tools.sh
xbuild_tools "$@"

napi=$root/node_modules/.bin/napi
if [[ ! -x "$napi" ]]; then
  echo "build-all: $napi is missing (run npm ci first)" >&2
  exit 1
fi

mapfile -t all < <(node scripts/xbuild/targets.js list)
platforms=("$@")
[[ ${#platforms[@]} -gt 0 ]] || platforms=("${all[@]}")
for p in "${platforms[@]}"; do
  if ! printf '%s\n' "${all[@]}" | grep -qx -- "$p"; then
    echo "build-all: unknown platform $p (built here: ${all[*]})" >&2
    exit 2
  fi
done

target_root=${XBUILD_TARGET_DIR:-$root/target/xbuild}
summary=()
failed=()
for p in "${platforms[@]}"; do
  binary=npm/$p/condense-native.$p.node
  # A failed build must not leave an older binary behind for the tests.
  rm -f "$binary"
  env_lines=$(node scripts/xbuild/targets.js env "$p")
  zig_target=$(sed -n 's/^ZIG_TARGET=//p' <<<"$env_lines")
  build_env=()
  while IFS= read -r line; do
    [[ -n "$line" && "$line" != ZIG_TARGET=* ]] && build_env+=("$line")
  done <<<"$env_lines"
  out=$target_root/$p/out
  rm -rf "$out"
  echo "build-all: $p ($zig_target)" >&2
  start=$SECONDS
  if env ${build_env[@]+"${build_env[@]}"} nice -n 10 "$napi" build --platform --release \
      --target "$zig_target" --cross-compile \
      --target-dir "$target_root/$p" --output-dir "$out" --no-js >&2; then
    cp "$out/condense-native.$p.node" "$binary"
    size=$(stat -c %s "$binary")
    summary+=("$(printf '%-18s built in %4d s  %9d bytes' "$p" $((SECONDS - start)) "$size")")
  else
    summary+=("$(printf '%-18s FAILED after %d s' "$p" $((SECONDS - start)))")
    failed+=("$p")
  fi
done

printf 'build-all: %s\n' "${summary[@]}" >&2
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "build-all: failed: ${failed[*]}" >&2
  exit 1
fi
