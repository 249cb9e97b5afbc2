#!/usr/bin/env bash
# Fails when a shared library needs a glibc symbol version above the newest one the jar promises to load on
# (GLIBC_2.17: RHEL/CentOS 7, and the first glibc with aarch64), naming the symbols that need it.
# Usage: native/check-glibc.sh LIBRARY...   (readelf reads every architecture, so no cross binutils are needed)
set -euo pipefail
newest=2.17

status=0
for library in "$@"; do
    [ -f "$library" ] || { echo "check-glibc: $library is missing" >&2; status=1; continue; }
    # What the dynamic loader checks ("version `GLIBC_2.33' not found"): the versions the library needs ...
    needed=$(readelf --version-info --wide "$library" | grep -o 'Name: GLIBC_[0-9.]*' | sed 's/Name: GLIBC_//' | sort -uV || true)
    # ... and the undefined symbols that ask for them, as name@GLIBC_x.y.
    symbols=$(readelf --dyn-syms --wide "$library" | awk '$7 == "UND" && $8 ~ /@GLIBC_/ { print $8 }' | sed 's/ (.*//' || true)
    too_new=
    for version in $needed; do
        [ "$(printf '%s\n%s\n' "$version" "$newest" | sort -V | tail -n 1)" = "$newest" ] && continue
        users=$(grep "@GLIBC_$version\$" <<<"$symbols" | sed 's/@.*//' | sort | paste -sd ' ' || true)
        too_new="$too_new  GLIBC_$version: ${users:-(no symbol named; see readelf --version-info)}"$'\n'
    done
    if [ -n "$too_new" ]; then
        echo "check-glibc: $library needs glibc newer than $newest, so it would not load on older systems:" >&2
        printf '%s' "$too_new" >&2
        echo "check-glibc: use what glibc 2.17 has, or the system call itself (docs/DESIGN.md, \"Which glibc\")." >&2
        status=1
    else
        echo "check-glibc: $library needs at most GLIBC_$(tail -n 1 <<<"$needed") (limit $newest)"
    fi
done
exit $status
