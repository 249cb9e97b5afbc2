#!/usr/bin/env bash
# Power-loss table: what each NBD server loses of what it acknowledged as durable when the power is cut.
# A file on LazyFS (a FUSE file system that drops every unsynced byte on `lazyfs::clear-cache`) is served over a
# Unix socket; a python3-libnbd client sends COUNT requests of 64 KiB, then kills the server (SIGKILL, with the
# connection still open, so that nothing is flushed on disconnect); the power is cut and the 64 KiB blocks of the
# backing file that do not hold what was sent are counted. Five tests per server: writes with FUA; writes, then
# FLUSH; WRITE_ZEROES with FUA over durable data; plain writes and plain WRITE_ZEROES (durable only where the
# server says every write is: pagewise writethrough and directsync, qemu-nbd --cache=directsync).
# Prints a markdown table on stdout (the one in docs/DURABILITY.md); progress goes to stderr.
#
# Needs (Debian): python3-libnbd, qemu-utils (qemu-nbd), nbdkit; LazyFS from ../shared/tools/lazyfs/build.sh
# (or $PAGEWISE_LAZYFS), root and /dev/fuse. Builds the pagewise jar through bin/pagewise when it is stale.
set -euo pipefail

usage() {
    cat <<USAGE
usage: jmh/power-loss.sh [options]
  -n COUNT     requests of 64 KiB per test (default 64)
  -d DIR       where LazyFS's backing directory goes (default /var/tmp; must not be tmpfs)
  -c CONFIGS   comma-separated subset of: $ALL_CONFIGS
  -h           this help
USAGE
}

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
ALL_CONFIGS="pagewise-writeback,pagewise-writethrough,pagewise-unsafe,pagewise-direct,pagewise-directsync,pagewise-evict,pagewise-dontcache,qemu-none-native,qemu-directsync,nbdkit-none"
TESTS=(fua flush zero-fua plain zero)
count=64 dir=/var/tmp configs=$ALL_CONFIGS
parse_options n=count d=dir c=configs -- "$@"

require_tools qemu-nbd:qemu-utils nbdkit:nbdkit fusermount3:fuse3
python=
for candidate in /usr/bin/python3 python3; do # a pyenv python3 first on PATH lacks Debian's nbd module
    if "$candidate" -c 'import nbd' 2>/dev/null; then python=$candidate; break; fi
done
[ -n "$python" ] || { echo "power-loss: no python3 can import nbd; apt-get install -y python3-libnbd" >&2; exit 1; }
lazyfs_bin=${PAGEWISE_LAZYFS:-}
if [ -z "$lazyfs_bin" ]; then
    lazyfs_bin=$(bash "$root/../shared/tools/lazyfs/build.sh" | tail -n 1)
fi
[ -x "$lazyfs_bin" ] || { echo "power-loss: no LazyFS binary at '$lazyfs_bin'" >&2; exit 1; }
if printf '%s' "$configs" | grep -q pagewise; then
    echo "power-loss: checking the pagewise jar ..." >&2
    "$root/bin/pagewise" --version >&2 # builds the jar now, not while a server start is being waited for
fi

work=$(mktemp -d "$dir/pagewise-power-loss.XXXXXX")
mnt="$work/mnt" backing="$work/backing" fifo="$work/faults.fifo" lazylog="$work/lazyfs.log"
sock="$work/nbd.sock" log="$work/server.log"
mkdir "$mnt" "$backing"
mkfifo "$fifo"
cat > "$work/lazyfs.toml" <<TOML
[faults]
fifo_path="$fifo"
[cache]
apply_eviction=false
[cache.simple]
custom_size="512mb"
blocks_per_page=1
[filesystem]
log_all_operations=false
logfile=""
TOML
lazyfs_pid=
finish() {
    stop_server
    if grep -q " $mnt " /proc/self/mountinfo; then fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; fi
    if [ -n "$lazyfs_pid" ]; then kill "$lazyfs_pid" 2>/dev/null || true; wait "$lazyfs_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap finish EXIT INT TERM
"$lazyfs_bin" "$mnt" --config-path "$work/lazyfs.toml" -f -o modules=subdir -o subdir="$backing" >"$lazylog" 2>&1 &
lazyfs_pid=$!
for _ in $(seq 1 400); do
    grep -q " $mnt " /proc/self/mountinfo && grep -q "waiting for fault commands" "$lazylog" && break
    kill -0 "$lazyfs_pid" 2>/dev/null || { echo "power-loss: LazyFS exited:" >&2; cat "$lazylog" >&2; exit 1; }
    sleep 0.05
done
grep -q " $mnt " /proc/self/mountinfo || { echo "power-loss: LazyFS did not mount $mnt:" >&2; cat "$lazylog" >&2; exit 1; }

# power_cut: LazyFS drops everything unsynced; returns once it says so (at most 20 s).
power_cut() {
    local before _
    before=$(grep -c "cache is cleared" "$lazylog" || true)
    timeout 20 sh -c "echo lazyfs::clear-cache > '$fifo'"
    for _ in $(seq 1 400); do
        [ "$(grep -c "cache is cleared" "$lazylog" || true)" -gt "$before" ] && return 0
        sleep 0.05
    done
    echo "power-loss: LazyFS did not clear its cache:" >&2; cat "$lazylog" >&2; exit 1
}

# The client side of one test, in python3-libnbd: "prepare" writes the old data through the mount and fsyncs it
# (durable, and cached in LazyFS, which cannot serve O_DIRECT reads from its backing file); "send" sends the
# requests and kills the server; "count" prints how many 64 KiB blocks of the backing file are not what was sent.
client() {
    "$python" - "$@" <<'PYTHON'
import os, random, signal, sys
import nbd
phase, test, count, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
BLOCK = 64 * 1024
old = random.Random(1).randbytes(count * BLOCK)
new = bytes(count * BLOCK) if test.startswith("zero") else random.Random(2).randbytes(count * BLOCK)
if phase == "prepare":
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, old)
    os.fsync(fd)
    os.close(fd)
elif phase == "send":
    uri, server_pid = sys.argv[5], int(sys.argv[6])
    h = nbd.NBD()
    h.connect_uri(uri)
    if test in ("fua", "zero-fua") and not h.can_fua():
        sys.exit("the server does not take FUA")
    for i in range(count):
        if test.startswith("zero"):
            h.zero(BLOCK, i * BLOCK, nbd.CMD_FLAG_FUA if test == "zero-fua" else 0)
        else:
            h.pwrite(new[i * BLOCK:(i + 1) * BLOCK], i * BLOCK, nbd.CMD_FLAG_FUA if test == "fua" else 0)
    if test == "flush":
        h.flush()
    os.kill(server_pid, signal.SIGKILL)  # with the connection open: no flush on disconnect
else:
    with open(path, "rb") as f:
        data = f.read()
    lost = sum(1 for i in range(count) if data[i * BLOCK:(i + 1) * BLOCK] != new[i * BLOCK:(i + 1) * BLOCK])
    print(lost)
PYTHON
}

start() {
    local config=$1 file=$2
    rm -f "$sock"
    case $config in
        pagewise-*) "$root/bin/pagewise" serve --socket="$sock" --cache="${config#pagewise-}" "$file" >"$log" 2>&1 & ;;
        qemu-none-native) qemu-nbd -f raw --cache=none --aio=native -t -k "$sock" "$file" >"$log" 2>&1 & ;;
        qemu-directsync) qemu-nbd -f raw --cache=directsync -t -k "$sock" "$file" >"$log" 2>&1 & ;;
        nbdkit-none) nbdkit -f -U "$sock" file "$file" cache=none >"$log" 2>&1 & ;;
        *) echo "unknown config $config" >&2; exit 2 ;;
    esac
    server_pid=$!
    # the socket file appears at bind(), before listen(): wait until a connection is taken
    wait_for_server "server $config" "$log" "$python" -c \
        'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$sock"
}

label() {
    case $1 in
        pagewise-*) echo "pagewise ${1#pagewise-}" ;;
        qemu-none-native) echo "qemu-nbd \`--cache=none --aio=native\`" ;;
        qemu-directsync) echo "qemu-nbd \`--cache=directsync\`" ;;
        nbdkit-none) echo "nbdkit \`file cache=none\`" ;;
    esac
}

# promised CONFIG TEST: whether the server says the test's writes are durable once acknowledged.
promised() {
    case $1:$2 in
        pagewise-unsafe:*) return 1 ;;
        pagewise-writethrough:plain | pagewise-directsync:plain | qemu-directsync:plain) return 0 ;;
        pagewise-writethrough:zero | pagewise-directsync:zero | qemu-directsync:zero) return 0 ;;
        *:plain | *:zero) return 1 ;;
        *) return 0 ;;
    esac
}

IFS=, read -r -a config_list <<< "$configs"
rows=()
for config in "${config_list[@]}"; do
    row="| $(label "$config") |"
    for test in "${TESTS[@]}"; do
        name="$config-$test.img"
        echo "power-loss: $config, $test ..." >&2
        client prepare "$test" "$count" "$mnt/$name"
        start "$config" "$mnt/$name"
        # The client kills the server; bash reports that ("Killed") at the next command, inside this group.
        if ! { client send "$test" "$count" "$mnt/$name" "nbd+unix:///?socket=$sock" "$server_pid" 2>"$work/client.err"
               wait "$server_pid" || true; } 2>/dev/null; then
            echo "power-loss: the client failed against $config:" >&2
            cat "$work/client.err" "$log" >&2
            exit 1
        fi
        server_pid=
        power_cut
        lost=$(client count "$test" "$count" "$backing/$name")
        rm -f "$mnt/$name"
        if ! promised "$config" "$test"; then
            cell="not promised ($lost lost)"
        elif [ "$lost" -eq 0 ]; then
            cell="0 lost"
        else
            cell="**$lost of $count lost**"
        fi
        row="$row $cell |"
    done
    rows+=("$row")
done

echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on Linux $(uname -r), pagewise $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'),"
echo "$(qemu-nbd --version | head -n 1), $(nbdkit --version); $count requests of 64 KiB per cell, with \`jmh/power-loss.sh${*:+ $*}\`."
echo
echo "| server, mode | FUA writes | writes, then FLUSH | WRITE_ZEROES + FUA | plain writes | plain WRITE_ZEROES |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
