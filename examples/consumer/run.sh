#!/usr/bin/env bash
# Proves the published artifact from outside: installs the library (tests skipped), builds this consumer against
# the installed io.pagewise:pagewise, and runs it with the library on the module path, on JDK 17 and, when present,
# on JDK 25, with the one flag the module needs. Fails when the consumer fails or the JVM prints any WARNING.
# PAGEWISE_JDK17 / PAGEWISE_JDK25 name other JDK homes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

jdk17=${PAGEWISE_JDK17:-$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -n 1)}
jdk25=${PAGEWISE_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}

mvn -B -q -ntp -f "$root/pom.xml" -DskipTests install
mvn -B -q -ntp -f "$here/pom.xml" package

# The residency checks need a disk-backed filesystem (tmpfs pages cannot be evicted): target/ is in the checkout.
work="$here/target/work"
mkdir -p "$work"
stderr=$(mktemp)
trap 'rm -f "$stderr"' EXIT

run_on() {
    local home=$1 version=$2 java=$1/bin/java
    if ! "$java" -version 2>&1 | head -n 1 | grep -q "version \"$version[.\"]"; then
        echo "run.sh: $java is not JDK $version" >&2
        return 1
    fi
    echo "== consumer on JDK $version ($home)"
    if ! "$java" --enable-native-access=io.pagewise -p "$here/target/modules" -m example.consumer "$work" 2>"$stderr"; then
        cat "$stderr" >&2
        echo "run.sh: the consumer failed on JDK $version" >&2
        return 1
    fi
    cat "$stderr" >&2
    if grep -q 'WARNING' "$stderr"; then
        echo "run.sh: the JVM printed warnings on JDK $version" >&2
        return 1
    fi
}

if [ -z "$jdk17" ] || [ ! -x "$jdk17/bin/java" ]; then
    echo "run.sh: no JDK 17 found (set PAGEWISE_JDK17)" >&2
    exit 1
fi
run_on "$jdk17" 17
if [ -x "$jdk25/bin/java" ]; then
    run_on "$jdk25" 25
else
    echo "run.sh: SKIPPED the JDK 25 run: no JDK at $jdk25"
fi
echo "run.sh: consumer OK"
