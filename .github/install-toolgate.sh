#!/usr/bin/env bash
# Installs toolgate for the composite action (action.yml) and puts it on PATH.
# - from source when the action is the workspace's own checkout (`uses: ./`) or INSTALL=source;
# - otherwise the release binary for this runner's OS and architecture, from the release whose
#   tag is the action's ref, after checking its SHA-256 against the published checksum.
set -euo pipefail
action="${GITHUB_ACTION_PATH:?run this from the toolgate action}"
mode="${INSTALL:-auto}"
bin_dir="${RUNNER_TEMP:-/tmp}/toolgate-bin"
mkdir -p "$bin_dir"

workspace="$(cd "${GITHUB_WORKSPACE:-.}" && pwd -P)"
action_real="$(cd "$action" && pwd -P)"
if [ "$mode" = auto ]; then
  case "$action_real/" in
    "$workspace"/*) mode=source ;;
    *) mode=release ;;
  esac
fi

case "$mode" in
  source)
    echo "building toolgate from source in $action_real"
    cargo build --release --locked --manifest-path "$action_real/Cargo.toml"
    cp "$action_real/target/release/toolgate" "$bin_dir/"
    ;;
  release)
    # Actions live at .../_actions/OWNER/REPO/REF: the release is REPO's tag REF.
    ref="$(basename "$action_real")"
    repo="$(basename "$(dirname "$action_real")")"
    owner="$(basename "$(dirname "$(dirname "$action_real")")")"
    case "${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}" in
      Linux-X64) target=x86_64-unknown-linux-gnu ;;
      Linux-ARM64) target=aarch64-unknown-linux-gnu ;;
      macOS-ARM64) target=aarch64-apple-darwin ;;
      Windows-X64) target=x86_64-pc-windows-msvc ;;
      *) echo "::error::no toolgate release binary for ${RUNNER_OS}-${RUNNER_ARCH}; use install: source" >&2; exit 1 ;;
    esac
    asset="toolgate-${ref}-${target}.tar.gz"
    url="${GITHUB_SERVER_URL:-https://github.com}/${owner}/${repo}/releases/download/${ref}"
    echo "downloading ${url}/${asset}"
    cd "$bin_dir"
    curl --fail --silent --show-error --location --retry 3 -o "$asset" "${url}/${asset}"
    curl --fail --silent --show-error --location --retry 3 -o "${asset}.sha256" "${url}/${asset}.sha256"
    if command -v sha256sum >/dev/null; then sha256sum -c "${asset}.sha256"; else shasum -a 256 -c "${asset}.sha256"; fi
    tar xzf "$asset"
    rm -f "$asset" "${asset}.sha256"
    ;;
  *)
    echo "::error::install must be auto, release or source, not '${mode}'" >&2
    exit 1
    ;;
esac
echo "$bin_dir" >> "$GITHUB_PATH"
"$bin_dir/toolgate" --version
