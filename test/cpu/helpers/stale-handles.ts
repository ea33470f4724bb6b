// A tracer of the C calls core makes, for a child process on a fake libcudart: it wraps every
// libcudart function core binds, remembers the handles destroyed (streams, events, graphs, executable
// graphs) and the allocations freed, and records each later call given one of them. A closed object's
// handle reaching C is a use after free on a real driver; a fake handle is often still readable, so
// this says what a crash would not.

/**
 * Script lines (CommonJS, run from the repository root before core makes any call) that install the
 * tracer. They define `tracer`: `tracer.stale` lists the calls given a dead handle (`'cudaStreamEndCapture
 * got a destroyed stream'`), `tracer.calls` the names of every call in order.
 */
export const STALE_HANDLE_TRACER = `
  const tracer = (() => {
    const { libcudart } = require('./src/ffi/cudart-lib.gen');
    const { U64 } = require('./src/ffi/scratch');
    const bind = libcudart.bind.bind(libcudart);
    const DESTROY = { cudaStreamDestroy: 'stream', cudaEventDestroy: 'event', cudaGraphDestroy: 'graph', cudaGraphExecDestroy: 'executable graph' };
    const dead = new Map(), freed = [], sizes = new Map(), stale = [], calls = [];
    const big = (v) => (typeof v === 'bigint' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : null);
    const deadWhat = (b) => dead.get(b) ?? freed.find(([lo, hi]) => b >= lo && b < hi)?.[2] ?? null;
    const check = (name, args) => {
      for (const a of args) {
        const b = big(a);
        // Small numbers are sizes, flags and counts, not handles.
        const what = b !== null && b >= 0x10000n ? deadWhat(b) : null;
        if (what) stale.push(name + ' got a ' + what);
      }
    };
    libcudart.bind = (name, addresses) => {
      const f = bind(name, addresses);
      const traced = (...args) => {
        check(name, args);
        const r = f(...args);
        const b = big(args[0]);
        calls.push(name);
        if (DESTROY[name] && b) dead.set(b, 'destroyed ' + DESTROY[name]);
        // A handle made again (the fake's malloc reuses memory) is alive again.
        if (/Create/.test(name)) dead.delete(U64[0]);
        if (name === 'cudaMalloc') {
          const at = U64[0], end = at + BigInt(args[1] || 1);
          sizes.set(at, args[1] || 1);
          for (let i = freed.length - 1; i >= 0; i--) if (freed[i][0] < end && at < freed[i][1]) freed.splice(i, 1);
        }
        if (name === 'cudaFree' && b && sizes.has(b)) freed.push([b, b + BigInt(sizes.get(b)), 'freed allocation']);
        return r;
      };
      traced.async = (...args) => { check(name + '.async', args.slice(0, -1)); calls.push(name + '.async'); return f.async(...args); };
      return traced;
    };
    return { stale, calls };
  })();`;
