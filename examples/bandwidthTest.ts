// bandwidthTest: CUDA's sample of that name: host-to-device, device-to-host and device-to-device
// copy bandwidth in GB/s (10^9 bytes a second), for pageable and pinned host memory, over a range of
// sizes. The measurement is core's measureBandwidth (what `cuda-bindings bandwidth` prints): copies
// timed with events.
//   npx tsx examples/bandwidthTest.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { measureBandwidth, type BandwidthRow } from 'cuda-bindings/core';
import { cudart } from 'cuda-bindings';
import { check, runExample } from './lib/runtime';

const TITLES: Record<BandwidthRow['direction'], string> = {
  H2D: 'Host to Device Bandwidth',
  D2H: 'Device to Host Bandwidth',
  D2D: 'Device to Device Bandwidth',
};

runExample('bandwidthTest', () => {
  const device = 0;
  console.log('[CUDA Bandwidth Test] - Starting...');
  console.log('Running on...\n');
  const [prop] = check(cudart.cudaGetDeviceProperties(device), 'cudaGetDeviceProperties');
  console.log(` Device ${device}: ${prop.name}`);
  console.log(' Range Mode (sizes from 64 KiB to 256 MiB; device to device counts the read and the write)');

  const rows = measureBandwidth(device);
  let shown = '';
  for (const row of rows) {
    const heading = `${row.direction} ${row.memory}`;
    if (heading !== shown) {
      shown = heading;
      console.log(`\n ${TITLES[row.direction]}, 1 Device(s)`);
      if (row.memory !== 'device') console.log(` ${row.memory.toUpperCase()} Memory Transfers`);
      console.log('   Transfer Size (Bytes)\tBandwidth(GB/s)');
    }
    console.log(`   ${String(row.bytes).padEnd(22)}\t${row.gbPerSecond.toFixed(1)}`);
  }
  console.log('');

  const bad = rows.filter((r) => !(Number.isFinite(r.gbPerSecond) && r.gbPerSecond > 0));
  for (const r of bad) console.error(`bandwidthTest: ${r.direction} ${r.memory} ${r.bytes} bytes measured ${r.gbPerSecond} GB/s`);
  return rows.length > 0 && bad.length === 0;
});
