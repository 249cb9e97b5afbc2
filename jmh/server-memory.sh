#!/usr/bin/env bash
# M1: peak resident memory (VmHWM) of the pagewise server while nbdcopy writes and then reads an image with
# 4 connections x 64 requests. The server is started by bin/pagewise, so it runs with the same JVM options as
# users get (PAGEWISE_JAR and PAGEWISE_JAVA_OPTS are honoured as there).
# Usage: jmh/server-memory.sh [SIZE] [MODE]   (default 2G evict)
# Needs (Debian): libnbd-bin (nbdcopy). Installs nothing itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=${1:-2G} mode=${2:-evict}
require_tools nbdcopy:libnbd-bin
work=$(mktemp -d /var/tmp/pagewise-mem.XXXXXX)
trap cleanup EXIT INT TERM
head -c "$size" /dev/urandom > "$work/src.raw"
truncate -s "$(stat -c %s "$work/src.raw")" "$work/disk.raw"
# bin/pagewise execs java, so $! is the JVM's pid.
"$root/bin/pagewise" serve --socket="$work/sock" --cache="$mode" "$work/disk.raw" >"$work/log" 2>&1 &
server_pid=$!
wait_for_unix_socket "$work/sock" "server pagewise" "$work/log"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), Linux $(uname -r), $(stat -c %s "$work/src.raw") bytes, --cache=$mode," \
    "JVM options: ${PAGEWISE_JAVA_OPTS-as bin/pagewise sets them} ($(tr '\0' ' ' < "/proc/$server_pid/cmdline" | sed 's/ $//'))"
uri="nbd+unix:///?socket=$work/sock"
nbdcopy -C 4 --requests=64 "$work/src.raw" "$uri"
nbdcopy -C 4 --requests=64 "$uri" null:
grep -E 'VmHWM|VmRSS' "/proc/$server_pid/status"
stop_server
