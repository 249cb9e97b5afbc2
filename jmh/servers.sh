# Starting and stopping the NBD servers under comparison; sourced by compare-servers.sh and server-cpu.sh so that
# both run every server the same way. The caller sets root (the checkout), sock (the socket path) and log (where
# the server's output goes).
#
# Configs: pagewise-MODE[@JAR][:THREADS] is `bin/pagewise serve --cache=MODE` (with another build's jar after @,
# and --threads=THREADS after :); nbdkit, nbdkit-none and nbdkit-none-random are `nbdkit file` with nothing,
# cache=none, or cache=none fadvise=random; qemu-writeback and qemu-none are `qemu-nbd -f raw --cache=...`.

server_pid=

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
        *) echo "unknown config $config" >&2; exit 2 ;;
    esac
    server_pid=$!
    for _ in $(seq 1 200); do
        [ -S "$sock" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "server $config did not start:" >&2
    cat "$log" >&2
    exit 1
}

stop_server() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}

# The share of file $1 in the page cache, in percent, as vmtouch reads it.
resident_percent() {
    vmtouch "$1" | awk '/Resident Pages/ { gsub("%", "", $NF); print $NF }'
}
