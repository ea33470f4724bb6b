#!/usr/bin/env bash
# Builds each examples/kernels/<name>.cu into <out-dir>/<name>.fatbin: machine code for every
# architecture CUDA 13.0 supports, and PTX for compute_120 that newer GPUs JIT-compile. nvcc's
# output is deterministic, so test/cpu/facades/kernels.test.ts rebuilds into a temporary folder and checks
# that the committed .fatbin files are current.
#   tools/build-kernels.sh [out-dir]      (default: examples/kernels)
# nvcc: $NVCC, else the one on PATH, else $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc.
set -euo pipefail
kernels=$(cd "$(dirname "$0")/../examples/kernels" && pwd)
out=$(mkdir -p "${1:-$kernels}" && cd "${1:-$kernels}" && pwd)

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  for c in nvcc "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
    if command -v "$c" >/dev/null 2>&1; then nvcc=$c; break; fi
  done
fi
[ -n "$nvcc" ] || { echo "build-kernels.sh: nvcc not found (set NVCC, put it on PATH, or set CUDA_HOME)" >&2; exit 1; }

flags=(-fatbin --threads 0)
for sm in 75 80 86 87 88 89 90 100 103 110 120 121; do
  flags+=(-gencode "arch=compute_$sm,code=sm_$sm")
done
flags+=(-gencode arch=compute_120,code=compute_120)

# From the kernels' folder, with relative names, so that no machine's paths end up in the output.
cd "$kernels"
for cu in *.cu; do
  "$nvcc" "${flags[@]}" -o "$out/${cu%.cu}.fatbin" "$cu"
done
