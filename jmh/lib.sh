# Helpers the benchmark scripts in jmh/ share: their help, the check for missing tools, the built jars, waiting for
# a server started in the background, stopping it, the cleanup trap, timing a command and a file's residency. Sourced by the
# jmh/*.sh scripts (as "$root/jmh/lib.sh", root being the checkout) and by jmh/servers.sh; defines functions and
# server_pid only.
# shellcheck shell=bash disable=SC2154 # root and work are the sourcing script's

# parse_options LETTER=VARIABLE... -- "$@": reads the script's options, each -LETTER VALUE into its VARIABLE (s=size:
# -s 1G sets size=1G); -h prints the help and exits 0, any other option the usage and exits 2. OPTIND is left past
# the options, for "shift $((OPTIND - 1))".
parse_options() {
    local letters= spec=() pair opt
    while [ "$1" != -- ]; do
        letters+="${1%%=*}:" spec+=("$1")
        shift
    done
    shift
    while getopts "${letters}h" opt; do
        case $opt in
            h) show_help; exit 0 ;;
            \?) usage_error ;;
        esac
        for pair in "${spec[@]}"; do
            [ "${pair%%=*}" != "$opt" ] || printf -v "${pair#*=}" %s "$OPTARG"
        done
    done
}

# show_help: prints the script's usage function when it has one, else its opening comment (from line 2 to the first
# line that is not a comment).
show_help() {
    if declare -F usage >/dev/null; then
        usage
    else
        awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"
    fi
}

# usage_error: prints the script's usage (or the "# Usage:" part of its opening comment) to stderr and exits 2.
usage_error() {
    if declare -F usage >/dev/null; then
        usage >&2
    else
        show_help | sed -n '/^# Usage:/,$p' >&2
    fi
    exit 2
}

# require_tools COMMAND:DEBIAN-PACKAGE...: exits 1, naming the packages to install, when a command is missing.
require_tools() {
    local tool missing=()
    for tool in "$@"; do
        command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "$(basename "$0" .sh): missing tools; install with: apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
}

# find_jar: prints the jar built in the checkout $root (not the sources or javadoc jar); exits 1 when there is none.
find_jar() {
    local jar
    for jar in "$root"/target/pagewise-*.jar; do
        [ -f "$jar" ] || continue # no match leaves the pattern itself in $jar
        case $jar in *-sources.jar|*-javadoc.jar) ;; *) echo "$jar"; return 0 ;; esac
    done
    echo "$(basename "$0" .sh): no pagewise jar; build it with: mvn -q package -DskipTests" >&2
    exit 1
}

# benchmarks_jar HOW-TO-BUILD: prints the JMH jar ($JAR, default jmh/target/benchmarks.jar in $root); exits 1,
# printing how to build it, when there is none.
benchmarks_jar() {
    local jar=${JAR:-$root/jmh/target/benchmarks.jar}
    [ -f "$jar" ] || { echo "no $jar; build it$1" >&2; exit 1; }
    echo "$jar"
}

# The pid of the server started last in the background; stop_server and cleanup stop it.
server_pid=

# wait_for_server NAME LOG COMMAND...: waits up to 60 s until COMMAND succeeds, i.e. until server $server_pid
# accepts. When the server exits first or does not accept in time, prints "NAME did not start:" and its LOG, and
# exits 1.
wait_for_server() {
    local name=$1 log=$2 _
    shift 2
    for _ in $(seq 1 1200); do
        "$@" 2>/dev/null && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "$name did not start:" >&2
    cat "$log" >&2
    exit 1
}

# wait_for_unix_socket SOCKET NAME LOG: waits for server $server_pid to create its Unix socket (wait_for_server).
wait_for_unix_socket() {
    wait_for_server "$2" "$3" test -S "$1"
}

# wait_for_tcp_port PORT NAME LOG: waits for server $server_pid to accept on 127.0.0.1:PORT (wait_for_server).
wait_for_tcp_port() {
    wait_for_server "$2" "$3" tcp_accepts "$1"
}
tcp_accepts() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1")
}

stop_server() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}

# cleanup: stops the server and removes the script's $work directory; the scripts' EXIT INT TERM trap.
cleanup() {
    stop_server
    rm -rf "$work"
}

# timed COMMAND...: runs COMMAND with its output discarded and prints the seconds it took.
timed() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

# The share of file $1 in the page cache, in percent, as vmtouch reads it.
resident_percent() {
    vmtouch "$1" | awk '/Resident Pages/ { gsub("%", "", $NF); print $NF }'
}

# The CPU seconds (user + system) process $1 has used so far, and those of its JIT compiler threads (HotSpot's
# "C1 CompilerThre…" and "C2 CompilerThre…"), as "total jit". Threads that ended are counted in the total only.
jit_cpu() {
    python3 - "$1" <<'PY'
import os, sys
pid, hz = sys.argv[1], os.sysconf("SC_CLK_TCK")
def cpu(stat):
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / hz
total = cpu(open(f"/proc/{pid}/stat").read())
jit = 0.0
for tid in os.listdir(f"/proc/{pid}/task"):
    try:
        stat = open(f"/proc/{pid}/task/{tid}/stat").read()
    except OSError:
        continue
    if "CompilerThre" in stat[stat.index("(") + 1:stat.rindex(")")]:
        jit += cpu(stat)
print(f"{total:.2f} {jit:.2f}")
PY
}
