#!/usr/bin/env bash
# npm run bench (on a GPU machine): the anchors (C, cuda-python, CuPy, raw koffi; .gpu/anchors, packed
# by ../shared/gpu/pack.sh) and this library's facade, in one run, then one table of ns per call with
# the ratio to C, and the same as JSON in bench/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
anchors=.gpu/anchors
[ -d "$anchors" ] || { echo "bench: $anchors is missing: run ../shared/gpu/pack.sh first" >&2; exit 1; }
out=$(mktemp -d)
bash "$anchors/run.sh" > "$out/anchors.csv" 2>&1 || true
nvcc -O2 -arch=native -cubin -o "$out/kern.cubin" "$anchors/kern.cu"
nvcc -O2 -arch=native -cubin -o "$out/bench.cubin" bench/kernels.cu
nvcc -O2 -o "$out/extra" bench/extra.cu
"$out/extra" "$out/bench.cubin" > "$out/extra.csv"
node dist-bench/bench/facade.js "$out/kern.cubin" "$out/bench.cubin" > "$out/facade.csv"
node dist-bench/bench/core.js "$out/bench.cubin" > "$out/core.csv"
# NVML: C against the committed declarations, then the facade, core, info and top (bench/nvml.ts).
gcc -O2 -I tools/codegen -o "$out/nvml" bench/nvml.c -l:libnvidia-ml.so.1
"$out/nvml" > "$out/nvml-c.csv"
node dist-bench/bench/nvml.js > "$out/nvml.csv"
node dist-bench/bench/report.js "$out/anchors.csv" "$out/extra.csv" "$out/facade.csv" "$out/core.csv" "$out/nvml-c.csv" "$out/nvml.csv"
if [ -n "${BENCH_CSV_DIR:-}" ]; then cp "$out"/*.csv "$BENCH_CSV_DIR"/; fi
