// The sampler's thread: a sample of every GPU each interval, and between samples a wait on NVML's
// event set (nvmlEventSetWait, in slices of WAIT_SLICE_MS so that a stop is seen), every message
// posted to the main thread as it comes. Nothing here runs on the main thread's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { NvmlSampler, WAIT_SLICE_MS, type ExporterEvent, type ExporterSample, type SamplerSettings } from './sample';

/** What the main thread hands the sampler's thread. */
export interface SamplerThreadInput {
  /** What to read. */
  settings: SamplerSettings;
  /** Milliseconds between samples. */
  interval: number;
  /** One Int32: set to 1 (and notified) to stop. */
  stop: SharedArrayBuffer;
}

/** Samples until the stop flag is set; `post` gets every sample and event. */
export function runSampler(input: SamplerThreadInput, post: (m: ExporterSample | ExporterEvent) => void): void {
  const stop = new Int32Array(input.stop);
  const stopped = () => Atomics.load(stop, 0) !== 0;
  const sampler = new NvmlSampler(input.settings);
  try {
    while (!stopped()) {
      const due = Date.now() + input.interval;
      post(sampler.sample());
      for (let left = due - Date.now(); left > 0 && !stopped(); left = due - Date.now()) {
        const slice = Math.min(left, WAIT_SLICE_MS);
        if (!sampler.waitsForEvents) {
          // No events to wait for: sleep until the next sample (a stop wakes it at once).
          Atomics.wait(stop, 0, 0, left);
          continue;
        }
        const t0 = Date.now();
        const event = sampler.waitForEvent(slice);
        if (event) post(event);
        // A wait that failed at once: sleep the rest of the slice rather than spin.
        else if (Date.now() - t0 < slice) Atomics.wait(stop, 0, 0, slice - (Date.now() - t0));
      }
    }
  } finally {
    sampler.close();
  }
}

const input = (workerData as { cudaBindingsExporter?: SamplerThreadInput } | null)?.cudaBindingsExporter;
if (parentPort && input) {
  const port = parentPort;
  runSampler(input, (m) => port.postMessage(m));
}
