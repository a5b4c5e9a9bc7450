#!/usr/bin/env bash
# Builds llama.cpp's own OpenAI-compatible server, `llama-server`, into
# target/peers/llama-server/bin (idempotent: does nothing when the binary is there).
#
# llama.cpp publishes no Debian package or PyPI wheel of its server, but the llama-cpp-python
# source distribution on PyPI vendors the whole llama.cpp tree (tools/server included). This
# script downloads that sdist with pip (no build, no dependencies), takes CMake and Ninja from
# their PyPI wheels, and builds only the `llama-server` target: CPU only, portable (no
# -march=native), static, without the web UI (LLAMA_USE_PREBUILT_UI=OFF: the UI assets are not
# in the sdist and would otherwise be fetched from the network) and without TLS. Everything but
# the binary is built in a temporary directory and removed.
#
# The version follows llama-cpp-python's pin in install.sh, so both servers run the same
# llama.cpp. About 12 minutes on two shared cores (10.5 minutes of CPU time). LLAMA_SERVER_JOBS sets the build's parallelism
# (default 2).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/target/peers/llama-server"
version=0.3.36

if [ -x "$dest/bin/llama-server" ]; then
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: \
  "cmake==4.4.5" "ninja==1.13.2"
# --no-binary for this one package only: pip then takes the sdist; its metadata is prepared in
# an isolated build environment, which takes a minute but builds nothing.
"$work/tools/bin/pip" download --quiet --disable-pip-version-check --no-deps \
  --no-binary llama-cpp-python --dest "$work" "llama-cpp-python==$version"
tar -xzf "$work/llama_cpp_python-$version.tar.gz" -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"

export PATH="$work/tools/bin:$PATH"
cmake -S "$src" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_CCACHE=OFF \
  -DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=OFF \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
nice -n 19 cmake --build "$work/build" --target llama-server -j "${LLAMA_SERVER_JOBS:-2}" \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; exit 1; }

mkdir -p "$dest/bin"
cp "$work/build/bin/llama-server" "$dest/bin/llama-server.partial"
mv "$dest/bin/llama-server.partial" "$dest/bin/llama-server"
