#!/usr/bin/env bash
# Run the dynamic-engine tests (the interpreter path; GPU tests skip without a GPU) against each
# Triton release given, each in a venv that shares this environment's torch and test tools:
#   bash bench/triton_versions.sh 3.3.1 3.4.0 3.5.1
# Prints one pytest summary line per version. Wheels come from pip (or a --find-links dir in
# PIP_FIND_LINKS, for machines without a network).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(mktemp -d)
for version in "$@"; do
    venv="$root/triton-$version"
    python3 -m venv --system-site-packages "$venv"
    "$venv/bin/python" -m pip install -q --no-deps "triton==$version" >/dev/null 2>&1 \
        || { echo "triton $version: install failed"; continue; }
    summary=$(PYTHONPATH="$PWD" "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/dynamic \
        2>&1 | tail -1)
    echo "triton $("$venv/bin/python" -c 'import triton; print(triton.__version__)'): $summary"
done
rm -rf "$root"
