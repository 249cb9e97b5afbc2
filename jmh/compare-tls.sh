#!/usr/bin/env bash
# NBD over TLS, pagewise beside nbdkit: nbdcopy reads the whole file from `pagewise serve --tls=require` and from
# `nbdkit --tls=require file`, over TCP on 127.0.0.1 with certificates made here by openssl. Paired, interleaved
# rounds (the order alternates each round); the file is held in the page cache (vmtouch -t) before every run, so
# the time is the servers' TLS and request handling, not the disk. Each server is started afresh for each run and
# left idle for a pause (-p) once it accepts connections, as a server is before its first client; optional untimed
# reads (-w) then make the timed read one by a server that has been serving. Prints median/min seconds per server
# and the paired ratio pagewise/nbdkit (median over rounds of the two times of the same round), then the pagewise
# server's CPU seconds up to the end of each timed read and how many of them its JIT compiler threads spent (jit.csv).
# On JDK 25+ bin/pagewise serves with its AOT cache (docs/SERVER.md), trained here before the first round if there is
# none; `-c pagewise,nbdkit,pagewise-no-aot` adds pagewise without it (PAGEWISE_AOT=off) to the same rounds.
#
# Needs (Debian): libnbd-bin (nbdcopy), nbdkit, vmtouch, openssl, python3, bc. Installs nothing itself.
set -euo pipefail

usage() {
    cat <<USAGE
usage: jmh/compare-tls.sh [options]
  -s SIZE      file size for head, e.g. 1G (default 1G)
  -r ROUNDS    paired rounds (default 5)
  -d DIR       where the test file goes (default /var/tmp)
  -o OUT       output directory for results.csv and summary.txt (default jmh/results-tls)
  -p SECONDS   idle time between a server accepting connections and the first read (default 2; pagewise
               compiles its TLS code in this time, see docs/SERVER.md)
  -w COUNT     untimed reads of the whole file before the timed one (default 0: the timed read is the
               server's first)
  -c CONFIGS   servers, comma-separated (default pagewise,nbdkit), taking turns to go first each round;
               pagewise-no-aot is pagewise without its AOT cache (PAGEWISE_AOT=off; JDK 25+)
  -h           this help
USAGE
}

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=jmh/lib.sh
source "$root/jmh/lib.sh"
size=1G rounds=5 dir=/var/tmp out="$root/jmh/results-tls" pause=2 warm=0 config_list=pagewise,nbdkit
parse_options s=size r=rounds d=dir o=out p=pause w=warm c=config_list -- "$@"

require_tools nbdcopy:libnbd-bin nbdkit:nbdkit vmtouch:vmtouch openssl:openssl python3:python3 bc:bc
find_jar >/dev/null # else bin/pagewise would build it while start_server waits
mkdir -p "$out"
work=$(mktemp -d "$dir/pagewise-tls-bench.XXXXXX")
certs="$work/certs"
log="$work/server.log"
trap cleanup EXIT INT TERM

# A CA and a server certificate for localhost and 127.0.0.1, in the layout both servers read.
mkdir -p "$certs"
(
    cd "$certs"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca-cert.pem -days 2 -subj "/CN=bench CA" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
    openssl x509 -req -in server.csr -CA ca-cert.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
        -extfile server.ext -out server-cert.pem 2>/dev/null
)

source_file="$work/source.raw"
echo "creating $size of random data in $source_file ..." >&2
head -c "$size" /dev/urandom > "$source_file"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Starts server $1 on port $2 and waits until it accepts connections.
start_server() {
    local config=$1 port=$2
    case $config in
        pagewise|pagewise-no-aot)
            PAGEWISE_AOT=$([ "$config" = pagewise ] && echo "${PAGEWISE_AOT:-on}" || echo off) \
                "$root/bin/pagewise" serve --tls=require --tls-certificates="$certs" --bind=127.0.0.1 --port="$port" \
                      "$source_file" >"$log" 2>&1 & ;;
        nbdkit) nbdkit -f -i 127.0.0.1 -p "$port" --tls=require --tls-certificates="$certs" file "$source_file" \
                    >"$log" 2>&1 & ;;
    esac
    server_pid=$!
    wait_for_tcp_port "$port" "server $config" "$log"
}

csv="$out/results.csv"
echo "round,size,pause_s,warm_reads,config,seconds" > "$csv"
# The pagewise server's CPU seconds from its start to the end of the timed read, and its JIT compilers' share.
jit_csv="$out/jit.csv"
echo "round,config,server_cpu_s,jit_cpu_s" > "$jit_csv"
IFS=, read -r -a configs <<<"$config_list"
for config in "${configs[@]}"; do
    case $config in pagewise|pagewise-no-aot|nbdkit) ;; *) echo "-c: unknown server $config" >&2; exit 2 ;; esac
done
# Trains bin/pagewise's AOT cache now if it has none for this jar and JDK, not while a round waits for the server.
"$root/bin/pagewise" serve --tls=require --help >/dev/null
for round in $(seq 1 "$rounds"); do
    for i in "${!configs[@]}"; do
        config=${configs[$(( (i + round) % ${#configs[@]} ))]}
        vmtouch -q -t "$source_file"
        port=$(free_port)
        start_server "$config" "$port"
        sleep "$pause"
        for _ in $(seq 1 "$warm"); do nbdcopy "nbds://localhost:$port/?tls-certificates=$certs" null:; done
        seconds=$(timed nbdcopy "nbds://localhost:$port/?tls-certificates=$certs" null:)
        if [ "$config" != nbdkit ]; then
            read -r server_cpu jit_cpu < <(jit_cpu "$server_pid")
            echo "$round,$config,$server_cpu,$jit_cpu" >> "$jit_csv"
        fi
        stop_server
        printf '%s,%s,%s,%s,%s,%.3f\n' "$round" "$size" "$pause" "$warm" "$config" "$seconds" | tee -a "$csv" >&2
    done
done

"$root/jmh/summarize.sh" "$csv" | tee "$out/summary.txt"
echo "pagewise server CPU from its start to the end of the timed read, and its JIT compiler threads' part:" \
    | tee -a "$out/summary.txt"
tee -a "$out/summary.txt" < "$jit_csv"
