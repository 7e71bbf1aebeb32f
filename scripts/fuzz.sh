#!/usr/bin/env bash
# Runs each cargo-fuzz target for a while, one after the other, in one
# process at low priority (the rest of the machine stays usable).
#
#   scripts/fuzz.sh [seconds] [runs]
#
# seconds: time per target (default 60, the CI smoke time); runs: stop a
# target earlier after this many executions (default: no limit). The long
# local run of docs/RELIABILITY.md is `scripts/fuzz.sh 1800 10000000`.
# Corpora grow in fuzz/corpus/<target>/ (git-ignored); the committed seeds
# in fuzz/corpus/seed/<target>/ are read too. A crash stops the script with
# the input saved under fuzz/artifacts/<target>/; the other targets still run
# and the script then exits non-zero. FUZZ_TARGETS="prune_bytes" picks targets.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

SECONDS_PER_TARGET="${1:-60}"
RUNS="${2:--1}"
read -r -a TARGETS <<<"${FUZZ_TARGETS:-prune_bytes prune_structured session_load}"
failed=()

if ! cargo +nightly --version >/dev/null 2>&1; then
  if command -v rustup >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
  else
    echo "fuzz.sh: needs the nightly toolchain (rustup toolchain install nightly)" >&2
    exit 1
  fi
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

# -O: optimized; -a: with debug assertions and overflow checks, so internal
# consistency checks (debug_assert!) fire as crashes too. AddressSanitizer is
# on (cargo-fuzz's default): simd-json has unsafe code.
FLAGS=(-O -a)
nice -n 10 cargo +nightly fuzz build "${FLAGS[@]}"

for target in "${TARGETS[@]}"; do
  extra=()
  case "$target" in
    prune_bytes) extra=(-dict=prune_bytes.dict) ;;
    prune_structured) extra=(-max_len=8192) ;;
    session_load) extra=(-max_len=65536) ;;
  esac
  mkdir -p "corpus/$target" target
  log="target/fuzz-$target.log"
  echo "== $target: ${SECONDS_PER_TARGET}s (runs limit: $RUNS), log in fuzz/$log"
  set +e
  nice -n 10 cargo +nightly fuzz run "${FLAGS[@]}" "$target" "corpus/$target" "corpus/seed/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -runs="$RUNS" -print_final_stats=1 "${extra[@]}" >"$log" 2>&1
  status=$?
  set -e
  grep -E '^(stat::|Done |INFO: Seed|==[0-9]+==|SUMMARY|Test unit written)|panicked|INITED' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "fuzz.sh: $target failed (exit $status); the input is under fuzz/artifacts/$target/" >&2
    failed+=("$target")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
