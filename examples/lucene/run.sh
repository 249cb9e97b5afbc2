#!/usr/bin/env bash
# Proves pagewise-lucene from outside: installs the library and the module (tests skipped), builds this application
# against the installed io.pagewise:pagewise-lucene with Lucene 9.12 and runs it on JDK 17, then builds it with
# Lucene 10 and runs it on JDK 25 when present. Fails when the application fails or the JVM prints any WARNING.
# PAGEWISE_JDK17 / PAGEWISE_JDK25 name other JDK homes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

jdk17=${PAGEWISE_JDK17:-$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -n 1)}
jdk25=${PAGEWISE_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}

mvn -B -q -ntp -f "$root/pom.xml" -DskipTests -Dmaven.javadoc.skip=true -pl lucene -am install

# The index must be on a disk-backed filesystem (tmpfs pages cannot be evicted): target/ is in the checkout.
work="$here/target/work"
stderr=$(mktemp)
trap 'rm -f "$stderr"' EXIT

run_on() {
    local home=$1 version=$2 lucene=$3 java=$1/bin/java
    if ! "$java" -version 2>&1 | head -n 1 | grep -q "version \"$version[.\"]"; then
        echo "run.sh: $java is not JDK $version" >&2
        return 1
    fi
    echo "== Lucene $lucene on JDK $version ($home)"
    rm -rf "$here/target/lib"
    JAVA_HOME=$home MAVEN_OPTS="${MAVEN_OPTS:-} $( [ "$version" = 17 ] || echo --sun-misc-unsafe-memory-access=allow)" \
        mvn -B -q -ntp -f "$here/pom.xml" -Dlucene.version="$lucene" package
    mkdir -p "$work"
    if ! "$java" --enable-native-access=ALL-UNNAMED -cp "$here/target/lib/*" example.lucene.Main "$work" \
            2>"$stderr"; then
        cat "$stderr" >&2
        echo "run.sh: the application failed on Lucene $lucene, JDK $version" >&2
        return 1
    fi
    cat "$stderr" >&2
    # Lucene 10 logs that the JDK's vector module is not enabled (its own advice, for its own speed); anything else
    # warned about fails.
    if grep 'WARNING' "$stderr" | grep -v -e 'VectorizationProvider' -e 'jdk.incubator.vector' | grep -q .; then
        echo "run.sh: the JVM printed warnings on Lucene $lucene, JDK $version" >&2
        return 1
    fi
}

if [ -z "$jdk17" ] || [ ! -x "$jdk17/bin/java" ]; then
    echo "run.sh: no JDK 17 found (set PAGEWISE_JDK17)" >&2
    exit 1
fi
run_on "$jdk17" 17 9.12.3
if [ -x "$jdk25/bin/java" ]; then
    run_on "$jdk25" 25 10.5.1
else
    echo "run.sh: SKIPPED the Lucene 10 run: no JDK 25 at $jdk25"
fi
echo "run.sh: lucene consumer OK"
