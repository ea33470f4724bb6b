// Waiting for a stream's work off the JS thread: what launchAsync, a prepared launch's async() and
// the In/Out/InOut launches resolve on.
import * as cudart from '../../runtime';
import { check } from './errors';

/** Resolves when the work queued on `stream` so far is done (an event, waited for off the JS thread). */
export async function completion(stream: cudart.cudaStream_t | null): Promise<void> {
  const ev = check(cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming), 'cudaEventCreateWithFlags');
  try {
    check(cudart.cudaEventRecord(ev, stream), 'cudaEventRecord');
    check(await cudart.async.cudaEventSynchronize(ev), 'cudaEventSynchronize');
  } finally {
    cudart.cudaEventDestroy(ev);
  }
}
