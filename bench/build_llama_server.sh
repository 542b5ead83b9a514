#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the llama.cpp vendored in the llama-cpp-python source
# distribution on PyPI, once per machine: the binary is cached under
# ${XDG_CACHE_HOME:-~/.cache}/mindrian/llama-server/<version>/, outside the checkout, so a
# second run (a fresh CI clone included) does not compile again. Prints the binary's path.
# No llama.cpp code or binary ever enters the repository.
#
# LLAMA_CPP_PYTHON_VERSION pins the sdist (default below); MINDRIAN_BUILD_JOBS sets the
# compile parallelism (default 2: the machine may be shared).
set -euo pipefail

version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
jobs="${MINDRIAN_BUILD_JOBS:-2}"
python="${PYTHON:-python3}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/mindrian/llama-server/$version"
binary="$cache/llama-server"

if [ -x "$binary" ]; then
    echo "$binary"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The sdist is the registry's artefact; pip downloads it without building anything.
"$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary :all: "llama-cpp-python==$version" -d "$work" >&2
tar -xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"

# GGML_NATIVE=OFF: the cached binary must run on any x86-64 CI runner, not just this CPU.
# The web UI (built or prebuilt from a download) is not needed to answer /v1 requests.
cmake -S "$src" -B "$work/build" -G "${CMAKE_GENERATOR:-Unix Makefiles}" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF \
    -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TOOLS=ON \
    -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_OPENSSL=OFF \
    -DLLAMA_CURL=OFF >&2
cmake --build "$work/build" --target llama-server -j "$jobs" >&2

mkdir -p "$cache"
# Copy under a temporary name then rename: an interrupted copy never looks like a cached binary.
cp "$work/build/bin/llama-server" "$cache/llama-server.partial"
mv "$cache/llama-server.partial" "$binary"
echo "$binary"
