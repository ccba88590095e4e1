#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks every tracked C, C++ and CUDA file against .clang-format (CI runs this); with --fix,
# rewrites them instead. clang-format 14 is pinned (scripts/bootstrap.sh installs it): each
# release formats a little differently, and a check must give one answer on every machine.
# Exit: 0 formatted, 1 some file differs (listed), 2 clang-format 14 missing.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${XFER_CLANG_FORMAT:-clang-format-14}
if ! command -v "$cf" >/dev/null; then
    echo "check-format: $cf not found (bash scripts/bootstrap.sh installs it)" >&2
    exit 2
fi
patterns=('*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -- "${patterns[@]}")
else # an exported tree: the same folders, without build trees
    mapfile -t files < <(find api backends bindings core tests tools \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \
        -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -not -path '*/build*' | sort)
fi
if [ "${1:-}" = "--fix" ]; then
    "$cf" -i "${files[@]}"
    echo "check-format: formatted ${#files[@]} files"
    exit 0
fi
# One run over all files; each difference is reported as "FILE:LINE:COL: error: code should be clang-formatted".
rc=0
report=$("$cf" --dry-run --Werror "${files[@]}" 2>&1) || rc=$?
mapfile -t bad < <(printf '%s\n' "$report" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: .*clang-format.*/\1/p' | sort -u)
if [ "$rc" -ne 0 ] && [ ${#bad[@]} -eq 0 ]; then
    printf '%s\n' "$report" >&2
    echo "check-format: $cf failed (exit $rc) without naming a file" >&2
    exit 1
fi
if [ ${#bad[@]} -gt 0 ]; then
    echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format (fix: bash scripts/check-format.sh --fix):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted"
