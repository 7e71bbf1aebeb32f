#!/usr/bin/env bash
# Installs what scripts/build-all.sh needs to cross-build the addon, and only
# what is missing (so it is cheap to run every time):
#   - the Rust standard library of the targets to build (rustup; all six
#     unless platforms are named);
#   - zig (Python package ziglang) and cargo-zigbuild (its binary wheel on
#     PyPI), pinned, in a virtualenv under $XBUILD_CACHE.
# Fails naming what it could not get.
#
#   bash scripts/xbuild/tools.sh [PLATFORM...]   # install / check
#   source scripts/xbuild/tools.sh; xbuild_tools [PLATFORM...]
#                                                # the same, then PATH has zig and cargo-zigbuild
#
# XBUILD_CACHE (default ~/.cache/condense-native-xbuild) is kept between runs
# on one machine, outside the work tree, so a fresh clone reuses it.

XBUILD_ZIG_VERSION=0.14.1
XBUILD_CARGO_ZIGBUILD_VERSION=0.24.1

xbuild_tools() {
  local here root cache venv missing=()
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  root=$(cd "$here/../.." && pwd)
  cache=${XBUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/condense-native-xbuild}
  venv=$cache/venv
  export XBUILD_CACHE=$cache
  mkdir -p "$cache"

  for tool in rustup cargo python3 node; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "xbuild: missing ${missing[*]} (the cross build needs rustup, cargo, python3 with venv, node)" >&2
    return 1
  fi

  local triples installed want=()
  triples=$(node -e "
    const t = require(process.argv[1]);
    const wanted = process.argv.slice(2);
    const platforms = wanted.length ? t.BUILT_HERE.filter((p) => wanted.includes(p)) : t.BUILT_HERE;
    console.log(platforms.map((p) => t.PLATFORMS[p].triple).join(' '));" "$root/scripts/xbuild/targets.js" "$@")
  installed=$(rustup target list --installed)
  for triple in $triples; do
    grep -qx "$triple" <<<"$installed" || want+=("$triple")
  done
  if [[ ${#want[@]} -gt 0 ]]; then
    echo "xbuild: rustup target add ${want[*]}" >&2
    rustup target add "${want[@]}" >&2 || {
      echo "xbuild: rustup could not add the targets ${want[*]}" >&2
      return 1
    }
  fi

  local stamp="$venv/.xbuild-${XBUILD_ZIG_VERSION}-${XBUILD_CARGO_ZIGBUILD_VERSION}"
  if [[ ! -f "$stamp" ]]; then
    echo "xbuild: installing ziglang $XBUILD_ZIG_VERSION and cargo-zigbuild $XBUILD_CARGO_ZIGBUILD_VERSION into $venv" >&2
    { [[ -x "$venv/bin/pip" ]] || python3 -m venv "$venv"; } >&2 || {
      echo "xbuild: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
      return 1
    }
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
      "ziglang==$XBUILD_ZIG_VERSION" "cargo-zigbuild==$XBUILD_CARGO_ZIGBUILD_VERSION" >&2 || {
      echo "xbuild: pip could not install ziglang==$XBUILD_ZIG_VERSION cargo-zigbuild==$XBUILD_CARGO_ZIGBUILD_VERSION" >&2
      return 1
    }
    touch "$stamp"
  fi

  # zig through the wrapper in scripts/xbuild/bin (see there why), for
  # cargo-zigbuild too (which would otherwise run the venv's ziglang itself).
  # Only those two go on PATH, not the venv's python.
  mkdir -p "$cache/bin"
  ln -sf "$venv/bin/cargo-zigbuild" "$cache/bin/cargo-zigbuild"
  export CARGO_ZIGBUILD_ZIG_PATH=$here/bin/zig
  export PATH="$here/bin:$cache/bin:$PATH"
  local got
  got=$(zig version 2>/dev/null) || true
  if [[ "$got" != "$XBUILD_ZIG_VERSION" ]]; then
    echo "xbuild: zig from $venv answers '${got}', expected $XBUILD_ZIG_VERSION" >&2
    return 1
  fi
  command -v cargo-zigbuild >/dev/null 2>&1 || {
    echo "xbuild: cargo-zigbuild is not in $venv/bin" >&2
    return 1
  }
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  xbuild_tools "$@"
  echo "xbuild: zig $(zig version), $(cargo-zigbuild --version), targets ready" >&2
fi
