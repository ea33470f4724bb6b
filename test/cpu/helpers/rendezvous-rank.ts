// One rank of the rendezvous test: gets the unique id through rendezvousFromEnv and prints it as
// base64 (rank 0 serves the id in RENDEZVOUS_ID), or prints the error.
import { rendezvous, rendezvousFromEnv } from '../../../src/core/nccl/rendezvous';
import { uniqueIdFromBase64, uniqueIdToBase64 } from '../../../src/nccl/helpers';

const o = rendezvousFromEnv();
rendezvous({
  ...o,
  timeoutMs: Number(process.env.RENDEZVOUS_TIMEOUT_MS),
  id: o.rank === 0 ? uniqueIdFromBase64(process.env.RENDEZVOUS_ID!) : undefined,
})
  .then((id) => console.log(JSON.stringify({ rank: o.rank, id: uniqueIdToBase64(id) })))
  .catch((e: Error) => {
    console.log(JSON.stringify({ rank: o.rank, error: e.message }));
    process.exitCode = 1;
  });
