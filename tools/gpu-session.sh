#!/usr/bin/env bash
# One GPU session: the GPU suite, the examples, the CLI, every bound function called once (going on
# past crashes), and the benchmark beside the anchors. Run on the GPU machine from the repo root,
# after `source .gpu/enter.sh`; logs go to $OUT (at most 8 files come back).
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export CI=true
npm run --silent build > /dev/null && npx tsc -p tsconfig.bench.json
{
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv; node --version
  for ex in deviceQuery vectorAddDrv jitProgram; do
    echo "== npx tsx examples/$ex.ts"; timeout 120 npx tsx "examples/$ex.ts" 2>&1; echo "exit $?"
  done
} > "$OUT/examples.txt" 2>&1
timeout 420 npm run --silent test:gpu > "$OUT/gpu-suite.txt" 2>&1; echo "exit $?" >> "$OUT/gpu-suite.txt"
{
  for c in info bandwidth latency; do echo "== npx cuda-bindings $c"; node dist/cli/main.js $c 2>&1; echo "exit $?"; done
} > "$OUT/cli.txt" 2>&1
for api in runtime driver nvrtc; do timeout 200 bash tools/find-crashers.sh $api; done > "$OUT/crashers.txt" 2>&1
timeout 300 bash bench/run.sh > "$OUT/bench.txt" 2>&1
cp bench/results.json "$OUT/" 2>/dev/null
ls -la "$OUT"
