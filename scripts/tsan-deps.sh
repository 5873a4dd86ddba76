#!/usr/bin/env bash
# Builds Debian's own abseil and gRPC (the installed versions, with Debian's
# patches) as shared libraries instrumented with ThreadSanitizer, into OUT
# (default build/tsan-deps). The tsan preset links against that abseil and
# puts OUT/lib on the executables' DT_RPATH, which the loader also searches
# for the dependencies of libraries: Debian's libgrpc++ and our code then
# load these instrumented libgrpc, libgpr and libabsl, and TSan sees every
# lock and every hand-off between gRPC's threads and ours.
#
# Why: Debian's libabsl and libgrpc are not built with -fsanitize=thread.
# absl::Mutex locks with futexes TSan cannot see, and gRPC passes buffers
# between its threads with atomics TSan cannot see, so accesses ordered by
# them look like races (13,329 reports in the first tsan run; 516 with
# abseil alone instrumented: docs/lab).
#
# The same versions and patches as the installed packages keep the ABI
# (inline namespace, options.h, SONAMEs) identical. Sources come from
# deb.debian.org and are checked against the checksums pinned here.
# protobuf, libstdc++, c-ares and OpenSSL stay uninstrumented (TSan sees
# their pthread calls). A rerun with the stamp present does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-build/tsan-deps}"

ABSL_VERSION=20220623.1-1+deb12u2
ABSL_ORIG_SHA256=abfe2897f3a30edaa74bc34365afe3c2a3cd012091a97dc7e008f7016adcd5fe
ABSL_DEBIAN_SHA256=e08490fc7b6f3beca1925953b0c4fb92df2de5e2a01295e4641e2a3d4e528eeb
GRPC_VERSION=1.51.1-3
GRPC_ORIG_SHA256=b55696fb249669744de3e71acc54a9382bea0dce7cd5ba379b356b12b82d4229
GRPC_DEBIAN_SHA256=767b69da166bae708a54c4740056d9e847d57d89885173016bfc57ebbf154b2d
POOL=http://deb.debian.org/debian/pool/main

stamp="$OUT/.stamp-absl-${ABSL_VERSION}-grpc-${GRPC_VERSION}"
if [[ -f "$stamp" ]]; then
  exit 0
fi

# The installed package must be the pinned one: same ABI or nothing.
check_installed() {  # package version
  local installed
  installed="$(dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true)"
  # A binNMU (+bN) rebuilds the same source.
  if [[ "${installed%+b[0-9]*}" != "$2" ]]; then
    echo "tsan-deps: $1 is '${installed:-not installed}' but this script" \
         "pins $2; update the version and SHA256 sums from $POOL" >&2
    exit 1
  fi
}
check_installed libabsl-dev "$ABSL_VERSION"
check_installed libgrpc++-dev "$GRPC_VERSION"

mkdir -p "$OUT/download" "$OUT/lib"
fetch() {  # pool-dir name sha256
  local path="$OUT/download/$2"
  if [[ ! -f "$path" ]] || ! echo "$3  $path" | sha256sum -c --quiet 2>/dev/null; then
    echo "tsan-deps: downloading $2" >&2
    curl -fsSL --retry 3 -o "$path.part" "$POOL/$1/$2"
    mv "$path.part" "$path"
  fi
  echo "$3  $path" | sha256sum -c --quiet
}

# Unpacks a Debian source package into $OUT/<name>/src with its patches.
unpack() {  # name pool-dir version orig-sha256 debian-sha256
  local name="$1" upstream="${3%-*}"
  fetch "$2" "${name}_${upstream}.orig.tar.gz" "$4"
  fetch "$2" "${name}_$3.debian.tar.xz" "$5"
  local src="$OUT/$name/src"
  rm -rf "$src"
  mkdir -p "$src"
  tar xzf "$OUT/download/${name}_${upstream}.orig.tar.gz" -C "$src" \
    --strip-components=1
  tar xJf "$OUT/download/${name}_$3.debian.tar.xz" -C "$src"
  while read -r patch; do
    [[ -z "$patch" || "$patch" == \#* ]] && continue
    patch -s -p1 -d "$src" < "$src/debian/patches/$patch"
  done < "$src/debian/patches/series"
}

common=(-G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -fsanitize=thread"
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -fsanitize=thread"
  -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON)
if command -v ccache >/dev/null; then
  common+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
           -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
prefix="$(realpath "$OUT")"

# abseil, as debian/rules configures its shared build.
unpack abseil a/abseil "$ABSL_VERSION" "$ABSL_ORIG_SHA256" "$ABSL_DEBIAN_SHA256"
cmake -S "$OUT/abseil/src" -B "$OUT/abseil/build" "${common[@]}" \
  -DBUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build "$OUT/abseil/build" -j "$(nproc)"
cmake --install "$OUT/abseil/build" >/dev/null

# gRPC's libraries against that abseil and the system's other packages, as
# debian/rules configures them. Only the shared libraries are copied into
# lib/: kbench still compiles against the system's headers and links its
# libgrpc++.so, whose SONAMEs these files carry.
unpack grpc g/grpc "$GRPC_VERSION" "$GRPC_ORIG_SHA256" "$GRPC_DEBIAN_SHA256"
cmake -S "$OUT/grpc/src" -B "$OUT/grpc/build" "${common[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix" -DgRPC_BUILD_TESTS=OFF \
  -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package \
  -DgRPC_PROTOBUF_PROVIDER=package -DgRPC_RE2_PROVIDER=package \
  -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package \
  -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF -DgRPC_BUILD_CODEGEN=ON \
  -DgRPC_BUILD_GRPC_CPP_PLUGIN=ON -DgRPC_BUILD_GRPC_CSHARP_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_NODE_PLUGIN=OFF -DgRPC_BUILD_GRPC_OBJECTIVE_C_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_PHP_PLUGIN=OFF -DgRPC_BUILD_GRPC_PYTHON_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_RUBY_PLUGIN=OFF \
  -DProtobuf_PROTOC_LIBRARY="$(ls /usr/lib/x86_64-linux-gnu/libprotoc.so.* | head -1)" \
  >/dev/null
# (libgrpc++_reflection stays Debian's: building it needs libprotoc-dev,
# and it only registers the reflection service.)
cmake --build "$OUT/grpc/build" -j "$(nproc)" --target grpc++
cp -P "$OUT"/grpc/build/lib{grpc,grpc++,gpr,upb,address_sorting}.so.* \
  "$OUT/lib/"
touch "$stamp"
echo "tsan-deps: instrumented abseil and gRPC in $OUT/lib" >&2
