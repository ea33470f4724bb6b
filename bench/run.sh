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
# The LTO rows: compile + link of the two units of examples/ltoLink.ts, in C and through core.
# A failure here costs these rows only (with its reason in the table's notes), not the run.
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d '.\n ')
if ! { nvcc -O2 -o "$out/lto" bench/lto.cpp -lnvrtc -lnvJitLink && "$out/lto" bench/lto/math.cu bench/lto/kernel.cu "$arch" > "$out/lto.csv"; } 2> "$out/lto.err"; then
  echo "# lto C anchor failed: $(head -c 300 "$out/lto.err" | tr '\n' ' ')" > "$out/lto.csv"
fi
node dist-bench/bench/linking.js > "$out/linking.csv" 2> "$out/linking.err" || echo "# lto core rows failed: $(head -c 300 "$out/linking.err" | tr '\n' ' ')" >> "$out/linking.csv"
# NCCL (one rank): C from nccl.h against the system's libnccl.so.2, when both are there. nccl.h is
# taken from $NCCL_HOME/include, else the nvidia-nccl Python wheel's nvidia/nccl/include; without
# either, the rows are left out and the table says so.
nccl_csv=()
nccl_lib=$(ls /lib/x86_64-linux-gnu/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2 2>/dev/null | head -1 || true)
nccl_inc=${NCCL_HOME:+$NCCL_HOME/include}
[ -n "$nccl_inc" ] && [ -f "$nccl_inc/nccl.h" ] || nccl_inc=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include"))' 2>/dev/null || true)
if [ -n "$nccl_lib" ] && [ -f "$nccl_inc/nccl.h" ]; then
  nvcc -O2 -I"$nccl_inc" -o "$out/nccl" bench/nccl.cu "$nccl_lib"
  NCCL_NVLS_ENABLE=0 "$out/nccl" > "$out/nccl-c.csv"
  NCCL_NVLS_ENABLE=0 CUDA_BINDINGS_NCCL="$nccl_lib" node dist-bench/bench/nccl.js > "$out/nccl-js.csv"
  echo "# NCCL rows: one rank, nccl.h from $nccl_inc, $nccl_lib" >> "$out/nccl-js.csv"
  nccl_csv=("$out/nccl-c.csv" "$out/nccl-js.csv")
else
  echo "# NCCL rows left out: libnccl.so.2 (${nccl_lib:-not found}) or nccl.h (${nccl_inc:-not found}) missing" > "$out/nccl-js.csv"
  nccl_csv=("$out/nccl-js.csv")
fi
# NVML: C against the committed declarations, then the facade, core, info and top (bench/nvml.ts).
gcc -O2 -I tools/codegen -o "$out/nvml" bench/nvml.c -l:libnvidia-ml.so.1
"$out/nvml" > "$out/nvml-c.csv"
node dist-bench/bench/nvml.js > "$out/nvml.csv"
node dist-bench/bench/report.js "$out/anchors.csv" "$out/extra.csv" "$out/facade.csv" "$out/core.csv" "$out/lto.csv" "$out/linking.csv" "${nccl_csv[@]}" "$out/nvml-c.csv" "$out/nvml.csv"
if [ -n "${BENCH_CSV_DIR:-}" ]; then cp "$out"/*.csv "$BENCH_CSV_DIR"/; fi
