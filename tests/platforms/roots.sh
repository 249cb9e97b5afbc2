#!/usr/bin/env bash
# Builds, or reuses, the Debian roots that tests/platforms/run.sh runs the jar in, and prints the root's path.
#
#   tests/platforms/roots.sh debian11   # bullseye amd64 (glibc 2.31) with its openjdk-17-jre-headless
#   tests/platforms/roots.sh arm64      # bookworm arm64 with its own openjdk-17-jre-headless, run under qemu-user
#
# A root lives in $PAGEWISE_ROOTS/NAME (default /var/cache/pagewise-roots) and is reused while its marker file
# says it was built completely from the same recipe; a half-built or outdated one is built anew. Building needs
# root, debootstrap and a Debian mirror (the one apt uses here, or $PAGEWISE_DEBIAN_MIRROR); arm64 also needs
# qemu-user-static and binfmt-support, and this script registers qemu-aarch64 with binfmt_misc if it is not.
set -euo pipefail

name=${1:?usage: roots.sh debian11|arm64}
roots=${PAGEWISE_ROOTS:-/var/cache/pagewise-roots}
case "$name" in
    debian11) suite=bullseye arch=amd64 ;;
    arm64)    suite=bookworm arch=arm64 ;;
    *) echo "roots.sh: unknown root '$name' (debian11 or arm64)" >&2; exit 2 ;;
esac
# procps: ps and pkill are handy when a test hangs inside the root; the JDK is all the tests need.
packages=openjdk-17-jre-headless,procps
# debootstrap resolves "default-jre-headless | java8-runtime-headless" (ca-certificates-java) by its first
# choice, which is a second JDK (11 in bullseye): left out, openjdk-17 satisfies the dependency itself.
excluded=default-jre-headless,openjdk-11-jre-headless
recipe="suite=$suite arch=$arch variant=minbase include=$packages exclude=$excluded"
java=/usr/lib/jvm/java-17-openjdk-$arch/bin/java
dir=$roots/$name
marker=$dir/.pagewise-root-complete

die() { echo "roots.sh: $*" >&2; exit 1; }

# The mirror apt is configured with here (deb822 or one-line sources), so that the roots come from where the
# machine's own packages do.
debian_mirror() {
    if [ -n "${PAGEWISE_DEBIAN_MIRROR:-}" ]; then echo "$PAGEWISE_DEBIAN_MIRROR"; return; fi
    local url
    url=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | grep -Eo '(URIs:[[:space:]]*|^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)[a-z]+://[^[:space:]]+' \
        | grep -Eo '[a-z]+://[^[:space:]]+' | grep -E '/debian/?$' | head -n 1 || true)
    echo "${url:-http://deb.debian.org/debian}"
}

# qemu-user through binfmt_misc runs arm64 programs (the second stage of debootstrap, then the JVM). With the F
# flag the kernel opens the interpreter when it is registered, so it works inside a chroot that lacks it.
ensure_qemu_binfmt() {
    command -v qemu-aarch64-static >/dev/null || die "qemu-aarch64-static is missing (apt-get install qemu-user-static binfmt-support)"
    if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || die "cannot mount binfmt_misc"
    fi
    if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
        command -v update-binfmts >/dev/null || die "update-binfmts is missing (apt-get install binfmt-support)"
        update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    fi
    grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null || die "qemu-aarch64 is not registered with binfmt_misc"
    grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 \
        || die "qemu-aarch64's binfmt_misc entry lacks the F flag, so it would not run inside a chroot"
}

complete() { [ -f "$marker" ] && [ "$(cat "$marker")" = "$recipe" ] && [ -x "$dir$java" ]; }

[ "$arch" = arm64 ] && ensure_qemu_binfmt

if complete; then
    echo "roots.sh: reusing $dir ($recipe)" >&2
    echo "$dir"
    exit 0
fi

[ "$(id -u)" = 0 ] || die "building $dir needs root"
command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
mirror=$(debian_mirror)
mkdir -p "$roots"
# Built beside its final place and moved there only when complete, so an interrupted build is never reused.
work=$dir.building
# --one-file-system: never into a mount a killed build might have left inside (there is none since debootstrap
# runs in a mount namespace of its own, below, but a root made otherwise might have them).
rm -rf --one-file-system "$work" "$dir"
start=$(date +%s)
echo "roots.sh: building $dir ($recipe) from $mirror" >&2
log=$roots/$name.debootstrap.log
# In mount and PID namespaces of its own, the /proc and /sys debootstrap mounts in the root and the programs it runs
# go away with it however it ends; bounded, since a stalled mirror would otherwise hold CI until its end.
if ! timeout -k 10 "${PAGEWISE_ROOT_TIMEOUT:-2400}" unshare --mount --propagation private --pid --fork --kill-child \
        debootstrap --arch="$arch" --variant=minbase --include="$packages" --exclude="$excluded" "$suite" "$work" "$mirror" \
        >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    [ -f "$work/debootstrap/debootstrap.log" ] && tail -n 30 "$work/debootstrap/debootstrap.log" >&2
    die "debootstrap $suite $arch failed (log: $log)"
fi
# The downloaded packages are installed: 100 MiB less to keep.
rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/*
# The JDK finds its libraries through $ORIGIN, which glibc reads from /proc/self/exe: it needs /proc. A private
# mount namespace drops that mount again, however this ends.
unshare --mount --propagation private sh -c 'mount -t proc proc "$1/proc" && chroot "$1" "$2" -version' sh "$work" "$java" \
    >"$log.java" 2>&1 || { cat "$log.java" >&2; die "the JDK does not run in $work"; }
echo "$recipe" >"$work/.pagewise-root-complete"
mv "$work" "$dir"
echo "roots.sh: built $dir in $(( $(date +%s) - start )) s" >&2
echo "$dir"
