#!/usr/bin/env bash
# Builds the cargo-fuzz targets once, then runs each for a while, one after
# the other, at low priority (the rest of the machine stays usable).
#
#   scripts/fuzz.sh [seconds] [runs]
#
# seconds: time per target (default 60); runs: stop a target earlier after
# this many executions (default: no limit). CI's smoke is
# `scripts/fuzz.sh 10` (.ci/run); the long local run of docs/RELIABILITY.md
# is `scripts/fuzz.sh 1800 10000000`.
#
# Environment:
#   FUZZ_TARGETS="prune_bytes engine_sync"  which targets (default: all seven)
#   FUZZ_TARGET_DIR=dir   cargo's target directory (default fuzz/target). A
#                         directory that outlives the clone turns the build
#                         (about 3 min from nothing on 2 cores) into a build of
#                         the crate alone (under 1 min).
#   FUZZ_CORPUS_DIR=dir   where the corpora grow (default fuzz/corpus, whose
#                         <target>/ folders git ignores); the committed seeds
#                         in fuzz/corpus/seed/<target>/ are read too.
#
# A crash stops that target with the input saved under
# fuzz/artifacts/<target>/; the other targets still run and the script then
# exits non-zero. Each target's log is fuzz/target/fuzz-<target>.log (under
# FUZZ_TARGET_DIR when set); the script prints its executions and exec/s.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

SECONDS_PER_TARGET="${1:-60}"
RUNS="${2:--1}"
read -r -a TARGETS <<<"${FUZZ_TARGETS:-prune_bytes prune_structured session_load engine_sync v8_wire json_reader scan_verdict}"
TARGET_DIR="${FUZZ_TARGET_DIR:-target}"
CORPUS_DIR="${FUZZ_CORPUS_DIR:-corpus}"
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
# on (cargo-fuzz's default): the crate's dependencies have unsafe code.
FLAGS=(-O -a --target-dir "$TARGET_DIR")
build_start=$SECONDS
nice -n 10 cargo +nightly fuzz build "${FLAGS[@]}"
echo "== build: $((SECONDS - build_start)) s"

for target in "${TARGETS[@]}"; do
  extra=()
  case "$target" in
    prune_bytes) extra=(-dict=prune_bytes.dict) ;;
    prune_structured) extra=(-max_len=8192) ;;
    session_load) extra=(-max_len=65536) ;;
    # Longer inputs make longer conversations and more steps.
    engine_sync) extra=(-max_len=2048) ;;
  esac
  mkdir -p "$CORPUS_DIR/$target" "$TARGET_DIR"
  log="$TARGET_DIR/fuzz-$target.log"
  case "$log" in /*) shown="$log" ;; *) shown="fuzz/$log" ;; esac
  echo "== $target: ${SECONDS_PER_TARGET}s (runs limit: $RUNS), log in $shown"
  set +e
  nice -n 10 cargo +nightly fuzz run "${FLAGS[@]}" "$target" "$CORPUS_DIR/$target" "corpus/seed/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -runs="$RUNS" -print_final_stats=1 "${extra[@]}" >"$log" 2>&1
  status=$?
  set -e
  grep -E '^(stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)|Done |INFO: Seed|==[0-9]+==|SUMMARY|Test unit written)|panicked|INITED' "$log" || true
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
