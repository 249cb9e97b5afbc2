#!/usr/bin/env bash
# Builds libpagewise.so for every platform the jar carries, each into OUTPUT_ROOT/<os>-<arch>/, and checks that
# none needs a glibc above 2.17 (native/check-glibc.sh). Maven runs it in generate-resources.
# Usage: native/build.sh SOURCE_DIR BUILD_DIR OUTPUT_ROOT JAVA_HOME
# linux-x86_64 is built by the host compiler, linux-aarch64 by Debian's cross compiler (gcc-aarch64-linux-gnu).
# Without the cross compiler the build fails under CI=true, and elsewhere goes on with linux-x86_64 alone and prints
# one line on stderr, starting with "pagewise: WARNING: ", that says so and what is missing (bin/pagewise passes it on).
set -euo pipefail
source_dir=$1 build_dir=$2 output_root=$3 java_home=$4

# A library an earlier build left would go into the jar though this build made none for its platform: the jar must
# carry what this build made, and what the warning below says.
rm -f "$output_root"/*/libpagewise.so

# One platform: configure and build in its own directory, then check the library it made.
build() {
    local directory=$1 platform=$2; shift 2
    cmake -S "$source_dir" -B "$directory" -DCMAKE_BUILD_TYPE=Release -DJAVA_HOME="$java_home" \
        -DPAGEWISE_OUTPUT_ROOT="$output_root" "$@"
    cmake --build "$directory"
    "$source_dir/native/check-glibc.sh" "$output_root/$platform/libpagewise.so"
}

host=linux-$(uname -m)
build "$build_dir" "$host"
if [ "$host" != linux-x86_64 ]; then
    echo "pagewise: WARNING: this jar carries the native library for $host alone: the other platforms are" \
        "cross-compiled on x86_64 only" >&2
    exit 0
fi

# What linux-aarch64 needs and lacks here: the cross compiler, and the C library's headers for it (only recommended
# by the compiler's package, so an install without recommends lacks them).
cross_missing() {
    if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
        echo "aarch64-linux-gnu-gcc (Debian packages gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
    elif ! aarch64-linux-gnu-gcc -E -x c - <<<'#include <sys/syscall.h>' >/dev/null 2>&1; then
        echo "the aarch64 C library headers (Debian package libc6-dev-arm64-cross)"
    fi
}

# The JNI headers are the host JDK's: jni.h is the same everywhere, and Linux's jni_md.h does not depend on the
# architecture.
missing=$(cross_missing)
if [ -z "$missing" ]; then
    build "$build_dir-aarch64" linux-aarch64 -DCMAKE_TOOLCHAIN_FILE="$source_dir/native/aarch64-linux-gnu.cmake"
elif [ "${CI:-}" = true ]; then
    echo "native/build.sh: linux-aarch64 cannot be built without $missing" >&2
    exit 1
else
    echo "pagewise: WARNING: this jar carries the native library for linux-x86_64 alone: linux-aarch64 is not" \
        "built, which needs $missing" >&2
fi
