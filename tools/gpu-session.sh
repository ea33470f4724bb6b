#!/usr/bin/env bash
# One GPU session: the GPU suite, the examples, every bound function called once, the benchmark
# beside the anchors, and the facts the generator needs from the GPU machine (nvrtc.h, exports).
# Run on the GPU machine from the repo root, after `source .gpu/enter.sh`; logs go to $OUT.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export CI=true
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv; node --version; } > "$OUT/machine.txt" 2>&1
cp /usr/local/cuda/include/nvrtc.h "$OUT/" 2>/dev/null
npm run --silent build > /dev/null
timeout 120 npx tsx examples/deviceQuery.ts > "$OUT/deviceQuery.txt" 2>&1; echo "exit $?" >> "$OUT/deviceQuery.txt"
timeout 300 npx jest --selectProjects gpu --runInBand > "$OUT/gpu-suite.txt" 2>&1; echo "exit $?" >> "$OUT/gpu-suite.txt"
for api in runtime driver; do timeout 250 bash tools/find-crashers.sh $api; done > "$OUT/crashers.txt" 2>&1
nvcc -O2 -arch=native -cubin -o /tmp/kern.cubin .gpu/anchors/kern.cu
timeout 200 bash .gpu/anchors/run.sh > "$OUT/anchors.csv" 2>&1
timeout 200 node --import tsx bench/facade.ts /tmp/kern.cubin > "$OUT/facade.csv" 2>&1
ls -la "$OUT"
