#!/usr/bin/env bash
# Installs toolgate for the composite action (action.yml) and puts it on PATH.
# - from source when the action is the workspace's own checkout (`uses: ./`) or INSTALL=source;
# - otherwise the release binary for this runner's OS and architecture (VERSION, else the
#   release matching the action's ref, else the latest), checked against the SHA-256 kept in
#   the action's tree under checksums/ (or, for older releases, the release's own .sha256).
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
    # Actions live at .../_actions/OWNER/REPO/REF.
    ref="$(basename "$action_real")"
    repo="$(basename "$(dirname "$action_real")")"
    owner="$(basename "$(dirname "$(dirname "$action_real")")")"
    api="${GITHUB_API_URL:-https://api.github.com}/repos/${owner}/${repo}"
    server="${GITHUB_SERVER_URL:-https://github.com}/${owner}/${repo}"
    auth=()
    if [ -n "${GITHUB_TOKEN:-}" ]; then auth=(-H "Authorization: Bearer ${GITHUB_TOKEN}"); fi
    api_get() {
      curl --fail --silent --show-error --location --retry 3 \
        -H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28" \
        "${auth[@]}" "$api/$1"
    }
    # A JSON field of the API's answer on stdin, without jq (not on every runner).
    json_field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" | head -n 1; }

    # The version: the `version` input, else the action's ref when it is a release tag,
    # else the tag that points at the ref's commit (`uses: OWNER/toolgate@SHA`), else the
    # latest release (`@main`, a branch).
    version="${VERSION:-}"
    if [ -z "$version" ] && [[ "$ref" =~ ^v[0-9] ]]; then version="$ref"; fi
    if [ -z "$version" ] && [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
      version="$(api_get "tags?per_page=100" 2>/dev/null | tr -d '\n' | sed 's/},{/}\n{/g' \
        | grep "\"sha\": *\"$ref\"" | json_field name || true)"
    fi
    if [ -z "$version" ] || [ "$version" = latest ]; then
      if ! latest="$(api_get releases/latest 2>/dev/null)"; then
        echo "::error title=toolgate::${owner}/${repo} has no release to install (ref '${ref}'). Set the action's \`version\` input to a release tag, or use \`install: source\` to build from the action's checkout." >&2
        exit 1
      fi
      version="$(printf '%s' "$latest" | json_field tag_name)"
    fi

    case "${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}" in
      Linux-X64) target=x86_64-unknown-linux-gnu ;;
      Linux-ARM64) target=aarch64-unknown-linux-gnu ;;
      macOS-ARM64) target=aarch64-apple-darwin ;;
      Windows-X64) target=x86_64-pc-windows-msvc ;;
      *) echo "::error::no toolgate release binary for ${RUNNER_OS}-${RUNNER_ARCH}; use install: source" >&2; exit 1 ;;
    esac
    # Named as .ci/package names them: xz for Linux and macOS, gzip for Windows.
    case "$target" in
      *-windows-*) asset="toolgate-${version}-${target}.tar.gz" ;;
      *) asset="toolgate-${version}-${target}.tar.xz" ;;
    esac
    # GNU tar runs `xz` to unpack (bsdtar on macOS has it built in); GitHub's Linux runners
    # have it, a minimal container may not.
    if [ "${RUNNER_OS:-Linux}" = Linux ] && ! command -v xz >/dev/null; then
      echo "::error title=toolgate::unpacking ${asset} needs xz; install it (the xz-utils package on Debian and Ubuntu), or use \`install: source\`." >&2
      exit 1
    fi
    url="${server}/releases/download/${version}"
    echo "downloading ${url}/${asset}"
    cd "$bin_dir"
    if ! curl --fail --silent --show-error --location --retry 3 -o "$asset" "${url}/${asset}"; then
      echo "::error title=toolgate::release ${version} of ${owner}/${repo} has no asset ${asset}. Check the \`version\` input, or use \`install: source\`." >&2
      exit 1
    fi
    # The checksum kept in the action's own tree wins: it does not come from the same place
    # as the binary. Releases before the tree kept one fall back to the release's .sha256.
    kept="$action_real/checksums/${asset}.sha256"
    if [ -f "$kept" ]; then
      cp "$kept" "${asset}.sha256"
    else
      echo "::warning title=toolgate::no checksum for ${asset} in the action's tree; checking against the release's own .sha256"
      curl --fail --silent --show-error --location --retry 3 -o "${asset}.sha256" "${url}/${asset}.sha256"
    fi
    if command -v sha256sum >/dev/null; then sha256sum -c "${asset}.sha256"; else shasum -a 256 -c "${asset}.sha256"; fi
    tar xf "$asset"
    rm -f "$asset" "${asset}.sha256"
    ;;
  *)
    echo "::error::install must be auto, release or source, not '${mode}'" >&2
    exit 1
    ;;
esac
echo "$bin_dir" >> "$GITHUB_PATH"
"$bin_dir/toolgate" --version
