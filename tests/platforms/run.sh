#!/usr/bin/env bash
# Runs the built jar on another platform than the build machine's, in a Debian root (tests/platforms/roots.sh):
#
#   tests/platforms/run.sh debian11   # bullseye amd64: glibc 2.31, its own OpenJDK 17
#   tests/platforms/run.sh arm64      # bookworm arm64 under qemu-user: the linux-aarch64 library
#
# In the root: `java -jar pagewise.jar --version` must say the native library is loaded, and `cachestats` must
# count the same resident pages as the host's vmtouch on a partly cached file. Then for every cache mode the root
# serves a file over a Unix socket, the host's nbdcopy copies a random file in and back out, cmp compares the
# bytes, `cachestats` in the root and vmtouch on the host must agree on what is left cached, and the clean modes
# (DIRECT, DIRECTSYNC, EVICT, DONTCACHE) must leave at most 1 % of the file cached.
#
# The files live in a directory of the host (ext4 here, so that O_DIRECT works) bind-mounted into the root, with
# the socket. Everything runs in its own mount and PID namespaces: when the run ends, however it ends, the kernel
# kills what it started and drops its mounts. Missing tools or a root that cannot be built fail under CI=true and
# are skipped with a message elsewhere. Uses the jar in target/ (PAGEWISE_JAR overrides).
#
# PAGEWISE_PLATFORM_JDK=DIR runs a JDK of the host in the root instead of the root's own (bind-mounted, read-only):
# a JDK 22+ makes the jar call the C library through FFM, on the root's glibc, and --version must say FFM.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ "${1:-}" != --inside ]; then
    name=${1:?usage: run.sh debian11|arm64}
    case "$name" in
        debian11) budget=${PAGEWISE_PLATFORM_TIMEOUT:-900} ;;
        arm64)    budget=${PAGEWISE_PLATFORM_TIMEOUT:-1800} ;;
        *) echo "run.sh: unknown platform '$name' (debian11 or arm64)" >&2; exit 2 ;;
    esac
    # A missing prerequisite fails under CI and is skipped, visibly, elsewhere.
    unavailable() {
        if [ "${CI:-}" = true ]; then echo "platform $name: FAILED: $*" >&2; exit 1; fi
        echo "platform $name: SKIPPED: $*" >&2
        exit 0
    }
    [ "$(id -u)" = 0 ] || unavailable "needs root (chroot, mounts, namespaces)"
    for tool in nbdcopy vmtouch cmp unshare chroot timeout debootstrap; do
        command -v "$tool" >/dev/null || unavailable "$tool is missing (apt-get install libnbd-bin vmtouch debootstrap)"
    done
    if [ "$name" = arm64 ]; then
        command -v qemu-aarch64-static >/dev/null || unavailable "qemu-aarch64-static is missing (apt-get install qemu-user-static binfmt-support)"
    fi
    jar=${PAGEWISE_JAR:-}
    if [ -z "$jar" ]; then
        jar=$(ls "$repo"/target/pagewise-*.jar 2>/dev/null | grep -Ev -- '-(sources|javadoc|tests)\.jar$' | head -n 1 || true)
    fi
    [ -n "$jar" ] && [ -f "$jar" ] || unavailable "no jar ${PAGEWISE_JAR:+at $PAGEWISE_JAR }(mvn package builds target/pagewise-*.jar; PAGEWISE_JAR names another)"
    start=$(date +%s)
    root=$(bash "$here/roots.sh" "$name") || unavailable "the $name root could not be built (see above)"
    echo "platform $name: root ready in $(( $(date +%s) - start )) s: $root" >&2
    # --kill-child: if this script is killed, the namespace's first process dies, and the kernel with it kills
    # every process in the namespace and drops its mounts.
    status=0
    timeout -k 10 "$budget" unshare --mount --propagation private --pid --fork --kill-child \
        bash "$0" --inside "$name" "$root" "$(readlink -f "$jar")" "${PAGEWISE_PLATFORM_JDK:-}" || status=$?
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then
        echo "platform $name: FAILED: did not finish within $budget s" >&2
    fi
    echo "platform $name: $(( $(date +%s) - start )) s in all" >&2
    exit "$status"
fi

# Inside the namespaces: this shell is PID 1 of its PID namespace. A failed check is counted, not fatal.
set +e
name=$2 root=$3 jar=$4 host_jdk=$5
case "$name" in
    debian11) platform=linux-x86_64 java=/usr/lib/jvm/java-17-openjdk-amd64/bin/java size_mib=${PAGEWISE_PLATFORM_MIB:-256} step=120 ;;
    # The JVM under qemu-user runs several times slower: a smaller file, longer waits.
    arm64)    platform=linux-aarch64 java=/usr/lib/jvm/java-17-openjdk-arm64/bin/java size_mib=${PAGEWISE_PLATFORM_MIB:-32} step=600 ;;
esac
binding=JNI
if [ -n "$host_jdk" ]; then
    java=/opt/pagewise-jdk/bin/java
    major=$(sed -nE 's/^JAVA_VERSION="([0-9]+).*/\1/p' "$host_jdk/release")
    [ "${major:-0}" -ge 22 ] && binding=FFM
fi
modes=(writeback writethrough unsafe direct directsync evict dontcache)
clean=" direct directsync evict dontcache "
# As bin/pagewise runs it: C1 only and the serial collector start fastest, which counts most under qemu.
jvm=("$java" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m)

work=$(mktemp -d "${PAGEWISE_PLATFORM_WORK:-/var/tmp}/pagewise-$name.XXXXXX")
inside=/pagewise
server=
cleanup() {
    if [ -n "$server" ]; then kill -KILL "$server" 2>/dev/null || true; fi
    for m in "$root/opt/pagewise-jdk" "$root$inside" "$root/tmp" "$root/dev" "$root/proc"; do
        mountpoint -q "$m" && umount -l "$m"
    done
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

{ mkdir -p "$root$inside" "$root/proc" "$root/dev" "$root/tmp" &&
  mount -t proc proc "$root/proc" &&
  mount --bind /dev "$root/dev" &&
  mount -t tmpfs -o size=512m tmpfs "$root/tmp" &&
  mount --bind "$work" "$root$inside" &&
  cp "$jar" "$work/pagewise.jar" &&
  if [ -n "$host_jdk" ]; then
      mkdir -p "$root/opt/pagewise-jdk" && mount --bind "$host_jdk" "$root/opt/pagewise-jdk" &&
      mount -o remount,bind,ro "$root/opt/pagewise-jdk"
  fi; } || { echo "platform $name: FAILED: cannot set up $root"; exit 1; }

# Under qemu-user, QEMU_LOG=unimp makes the emulator name each system call it does not implement ("Unsupported
# syscall: N") on stderr; a kernel has all of them. Those lines show where the emulator differs.
if [ "$name" = arm64 ]; then export QEMU_LOG=unimp; fi
in_root() { timeout "$step" chroot "$root" "${jvm[@]}" -jar "$inside/pagewise.jar" "$@"; }

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "platform $name: ok: $*"; }
fail() { failed=$((failed + 1)); echo "platform $name: FAILED: $*"; }

# The aarch64 system calls (asm-generic numbers) that qemu-user may lack and that matter here.
syscall_name() {
    case "$1" in
        0) echo io_setup ;; 2) echo io_submit ;; 4) echo io_getevents ;;
        286) echo preadv2 ;; 287) echo pwritev2 ;; 293) echo rseq ;; 451) echo cachestat ;; *) echo "syscall $1" ;;
    esac
}
unsupported() { # LOG: the names of the system calls the emulator refused in it, once each
    sed -nE 's/^Unsupported syscall: ([0-9]+).*/\1/p' "$1" | sort -un | while read -r n; do
        printf '%s(%s) ' "$(syscall_name "$n")" "$n"; done | sed 's/ $//'
}

# RWF_DONTCACHE: Linux 6.14, on ext4 (the work directory's file system here) 6.17.
kernel_has_dontcache() { [ "$(printf '6.17\n%s\n' "$(uname -r | cut -d- -f1)" | sort -V | head -n 1)" = 6.17 ]; }

# vmtouch's resident/total page counts, and those `pagewise cachestats` reports in the root, for one file.
vmtouch_pages() { vmtouch "$1" | sed -nE 's/^ *Resident Pages: ([0-9]+)\/([0-9]+).*/\1 \2/p'; }
cachestats_pages() { { in_root cachestats "$inside/${1#"$work"/}" 2>&1 || true; } | sed -nE 's/.*: ([0-9]+)\/([0-9]+) pages resident.*/\1 \2/p'; }
# Waits (10 s at most) until readahead the host started has finished: two counts a second apart are equal.
settle() {
    local last now i
    last=$(vmtouch_pages "$1")
    for i in 1 2 3 4 5 6 7 8 9 10; do
        sleep 1; now=$(vmtouch_pages "$1")
        [ "$now" = "$last" ] && return
        last=$now
    done
}
# FILE: cachestats in the root agrees with vmtouch on the host. This shared machine's page cache loses a few pages
# of an idle file every second, so the root's count must lie between vmtouch's just before and just after it.
# Sets resident and total (vmtouch's, after) and disagreement (empty when they agree).
compare_counts() {
    local before after theirs r0 t0 r1 t1 rc tc
    before=$(vmtouch_pages "$1"); theirs=$(cachestats_pages "$1"); after=$(vmtouch_pages "$1")
    read -r r0 t0 <<<"$before"; read -r r1 t1 <<<"$after"; read -r rc tc <<<"$theirs"
    resident=$r1 total=$t1 disagreement=
    if [ -z "$theirs" ] || [ "$tc" != "$t1" ] || [ "$rc" -gt "$(( r0 > r1 ? r0 : r1 ))" ] || [ "$rc" -lt "$(( r0 < r1 ? r0 : r1 ))" ]; then
        disagreement="cachestats says '${theirs:-nothing}' resident/total pages, vmtouch '$before' before it and '$after' after"
    fi
}

echo "platform $name: $(chroot "$root" "$java" -version 2>&1 | grep -v '^Unsupported syscall' | head -n 1), $(chroot "$root" /usr/bin/ldd --version 2>/dev/null | head -n 1)"

test_version() {
    local out
    out=$(in_root --version 2>"$work/version.err") || true
    echo "platform $name: $out"
    [ "$name" = arm64 ] && echo "platform $name: qemu-user lacks, for the JVM alone: $(unsupported "$work/version.err")"
    # Then where asynchronous I/O runs: io_uring, or threads where the kernel or qemu-user refuses it.
    if grep -q "native library: loaded, $platform, $binding; asynchronous I/O: " <<<"$out"; then
        pass "--version: native calls available ($platform, $binding), asynchronous I/O: ${out##*asynchronous I/O: }"
    else fail "--version does not say 'native library: loaded, $platform, $binding; asynchronous I/O: ...'"; fi
}

# A file a quarter cached: both counts must agree page for page, and be neither nothing nor everything.
test_cachestats() {
    local file=$work/partly resident total disagreement
    head -c $((size_mib << 20)) /dev/urandom >"$file"
    # Dirty pages survive fadvise(DONTNEED): written back first, they can be evicted.
    sync "$file"
    vmtouch -qe "$file"
    vmtouch -qt -p "0-$((size_mib / 4))M" "$file"
    settle "$file"
    compare_counts "$file"
    if [ -n "$disagreement" ]; then
        fail "$disagreement"
        in_root cachestats "$inside/partly" 2>&1 | tail -n 3 | sed "s/^/  /"
    elif [ "${resident:-0}" -gt 0 ] && [ "$resident" -lt "$total" ]; then
        pass "cachestats agrees with vmtouch on a partly cached file ($resident/$total pages)"
    else
        fail "the file meant to be partly cached has $resident/$total pages cached"
    fi
    rm -f "$file"
}

# Serves a fresh file in MODE from the root, copies $work/source in and back out with the host's nbdcopy, and
# checks the bytes and what is left cached.
test_mode() {
    local mode=$1 disk=$work/disk-$mode sock=$work/sock-$mode log=$work/serve-$mode.log out=$work/out-$mode
    local uri="nbd+unix:///?socket=$sock" waited=0 problem= served lacking
    truncate -s $((size_mib << 20)) "$disk"
    chroot "$root" "${jvm[@]}" -jar "$inside/pagewise.jar" serve --cache="$mode" \
        --socket="$inside/sock-$mode" "$inside/disk-$mode" >"$log" 2>&1 &
    server=$!
    until grep -qs '^pagewise: serving' "$log" && [ -S "$sock" ]; do
        if ! kill -0 "$server" 2>/dev/null; then problem="the server exited"; break; fi
        if [ "$waited" -ge "$step" ]; then problem="the server did not listen within $step s"; break; fi
        sleep 1; waited=$((waited + 1))
    done
    served=$(sed -nE 's/^pagewise: serving .*cache=([a-z]+).*/\1/p' "$log")
    if [ -z "$problem" ]; then
        timeout "$step" nbdcopy "$work/source" "$uri" || problem="nbdcopy into the export failed"
    fi
    if [ -z "$problem" ]; then
        timeout "$step" nbdcopy "$uri" "$out" || problem="nbdcopy out of the export failed"
    fi
    kill -TERM "$server" 2>/dev/null || true
    waited=0
    while kill -0 "$server" 2>/dev/null && [ "$waited" -lt 60 ]; do sleep 1; waited=$((waited + 1)); done
    kill -KILL "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=
    # rseq: glibc goes on without it; cachestat: pagewise falls back to mincore, as on kernels before 6.5.
    lacking=$(unsupported "$log" | sed -E 's/rseq\(293\) ?//; s/cachestat\(451\) ?//; s/ $//')
    if [ -z "$problem" ] && ! cmp -s "$work/source" "$out"; then problem="the bytes read back differ from those written"; fi
    if [ -n "$problem" ]; then
        fail "$mode: $problem${lacking:+ (qemu-user lacks $lacking)}; the server said:"
        grep -v '^Unsupported syscall' "$log" | tail -n 8 | sed "s/^/  /"
        rm -f "$disk" "$out" "$log"
        return
    fi
    pass "$mode serves and round-trips $size_mib MiB through the host's nbdcopy"
    [ -n "$lacking" ] && echo "platform $name: $mode: qemu-user lacks $lacking (ENOSYS), which a kernel has; served all the same"
    # The mode the server says it serves in: DONTCACHE falls back to EVICT where the file refuses RWF_DONTCACHE,
    # which a kernel ≥ 6.14 on ext4 here does not, but qemu-user does when it lacks preadv2/pwritev2 (ENOSYS).
    if [ "$served" = "$mode" ]; then
        pass "$mode: the server says it serves in $mode"
    elif [ "$mode" = dontcache ] && [ "$served" = evict ] && [[ "$lacking" == *preadv2* || "$lacking" == *pwritev2* ]]; then
        pass "$mode: the server fell back to evict, as it must where the system refuses RWF_DONTCACHE: qemu-user lacks $lacking"
    elif [ "$mode" = dontcache ] && [ "$served" = evict ] && ! kernel_has_dontcache; then
        pass "$mode: the server fell back to evict, as it must on Linux $(uname -r) (RWF_DONTCACHE on ext4 needs 6.17)"
    else
        fail "$mode: the server serves in '${served:-?}', not $mode${lacking:+ (qemu-user lacks $lacking)}"
    fi
    local resident total disagreement
    compare_counts "$disk"
    if [ -n "$disagreement" ]; then
        fail "$mode: $disagreement"
    elif [[ "$clean" == *" $mode "* ]] && [ $((resident * 100)) -gt "$total" ]; then
        fail "$mode: $resident of $total pages left cached, more than 1 %"
    else
        pass "$mode: $resident/$total pages left cached$([[ "$clean" == *" $mode "* ]] && echo ", at most 1 %"), cachestats = vmtouch"
    fi
    # Only now: reading the file on the host caches it.
    if cmp -s "$work/source" "$disk"; then pass "$mode: the file holds what was written"
    else fail "$mode: the file on disk differs from what was written"; fi
    rm -f "$disk" "$out" "$log"
}

test_version
test_cachestats
head -c $((size_mib << 20)) /dev/urandom >"$work/source"
for mode in "${modes[@]}"; do test_mode "$mode"; done

echo "platform $name: $passed passed, $failed failed"
[ "$failed" = 0 ]
