# Starting and stopping the NBD servers under comparison; sourced by compare-servers.sh and server-cpu.sh so that
# both run every server the same way. The caller sets root (the checkout), sock (the socket path) and log (where
# the server's output goes).
#
# Configs: pagewise-MODE[@JAR][:THREADS] is `bin/pagewise serve --cache=MODE` (with another build's jar after @,
# and --threads=THREADS after :); nbdkit, nbdkit-none and nbdkit-none-random are `nbdkit file` with nothing,
# cache=none, or cache=none fadvise=random; qemu-writeback and qemu-none are `qemu-nbd -f raw --cache=...`.
# The newest peers, from the Debian trixie root NEWEST (default /opt/trixie, made by
# ../shared/tools/newest-nbd-tools.sh; it shares /tmp and /var/tmp with the host): nbdkit142, nbdkit142-none,
# qemu10-writeback, qemu10-none and qemu10-none-uring (qemu-nbd --aio=io_uring), run through chroot, which execs
# them (the pid is the server's).
#
# Sources jmh/lib.sh, whose stop_server, cleanup and resident_percent go with start_server.
# shellcheck shell=bash

# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"

# Starts the server of config $1 exporting file $2 in the background and waits for its socket.
start_server() {
    local config=$1 file=$2 mode jar= threads=()
    rm -f "$sock"
    case $config in
        pagewise-*)
            mode=${config#pagewise-}
            case $mode in *:*) threads=("--threads=${mode##*:}"); mode=${mode%:*} ;; esac
            case $mode in *@*) jar=${mode#*@}; mode=${mode%%@*} ;; esac
            PAGEWISE_JAR=$jar "$root/bin/pagewise" serve --socket="$sock" --cache="$mode" "${threads[@]}" "$file" \
                >"$log" 2>&1 & ;;
        nbdkit) nbdkit -f -U "$sock" file "$file" >"$log" 2>&1 & ;;
        nbdkit-none) nbdkit -f -U "$sock" file "$file" cache=none >"$log" 2>&1 & ;;
        nbdkit-none-random) nbdkit -f -U "$sock" file "$file" cache=none fadvise=random >"$log" 2>&1 & ;;
        qemu-writeback) qemu-nbd -f raw --cache=writeback -t -e 8 -k "$sock" "$file" >"$log" 2>&1 & ;;
        qemu-none) qemu-nbd -f raw --cache=none -t -e 8 -k "$sock" "$file" >"$log" 2>&1 & ;;
        nbdkit142) chroot "${NEWEST:-/opt/trixie}" nbdkit -f -U "$sock" file "$file" >"$log" 2>&1 & ;;
        nbdkit142-none) chroot "${NEWEST:-/opt/trixie}" nbdkit -f -U "$sock" file "$file" cache=none >"$log" 2>&1 & ;;
        qemu10-writeback) chroot "${NEWEST:-/opt/trixie}" qemu-nbd -f raw --cache=writeback -t -e 8 -k "$sock" "$file" \
            >"$log" 2>&1 & ;;
        qemu10-none) chroot "${NEWEST:-/opt/trixie}" qemu-nbd -f raw --cache=none -t -e 8 -k "$sock" "$file" \
            >"$log" 2>&1 & ;;
        qemu10-none-uring) chroot "${NEWEST:-/opt/trixie}" qemu-nbd -f raw --cache=none --aio=io_uring -t -e 8 \
            -k "$sock" "$file" >"$log" 2>&1 & ;;
        *) echo "unknown config $config" >&2; exit 2 ;;
    esac
    server_pid=$!
    wait_for_unix_socket "$sock" "server $config" "$log"
}
