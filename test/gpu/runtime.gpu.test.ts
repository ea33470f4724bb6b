// The CUDA runtime bindings against a real device: every test checks values the GPU or the driver
// produced (copied data, nvidia-smi's view of the device, pool statistics, graph topology).
// Without a device the whole suite is skipped, and its title says why.
import { execFileSync } from 'node:child_process';
import koffi from 'koffi';
import { cudart } from '../../src';
import { fillPattern, patternMismatches, okFor } from './helpers';

const { cudaError_t, cudaMemcpyKind } = cudart;
const H2D = cudaMemcpyKind.cudaMemcpyHostToDevice;
const D2H = cudaMemcpyKind.cudaMemcpyDeviceToHost;
const D2D = cudaMemcpyKind.cudaMemcpyDeviceToDevice;
const MiB = 1 << 20;

/** Whether a device is there; when not, a title that says why the suite is skipped. */
function probe(): { run: true; title: string } | { run: false; title: string } {
  try {
    const [cerr, count] = cudart.cudaGetDeviceCount();
    if (cerr !== cudaError_t.cudaSuccess) {
      const [, name] = cudart.cudaGetErrorName(cerr);
      return { run: false, title: `no CUDA device: cudaGetDeviceCount returned ${name}` };
    }
    if (!count) return { run: false, title: 'no CUDA device: cudaGetDeviceCount returned 0 devices' };
    return { run: true, title: `CUDA runtime on ${count} device(s)` };
  } catch (e) {
    return { run: false, title: `no CUDA runtime: ${(e as Error).message.split('\n')[0]}` };
  }
}

const gpu = probe();
const describeGpu = gpu.run ? describe : describe.skip;

/** Checks that a call returned cudaSuccess and gives back its outputs, known non-null. */
const ok = okFor<cudart.cudaError_t>(cudaError_t.cudaSuccess, cudaError_t);

/** The name of an error code, so that a failed expectation shows names rather than numbers. */
function errName(err: cudart.cudaError_t): string {
  return cudaError_t[err] ?? `cudaError ${err}`;
}

/** The sum of all words, exact (summed in chunks that stay below 2^53). */
function sum32(a: Uint32Array): bigint {
  let total = 0n;
  for (let at = 0; at < a.length; at += 1 << 20) {
    let s = 0;
    for (let i = at; i < Math.min(a.length, at + (1 << 20)); i++) s += a[i];
    total += BigInt(s);
  }
  return total;
}

/** Rows of `nvidia-smi --query-gpu=...`, one object a GPU. */
function nvidiaSmi(fields: string[]): Record<string, string>[] {
  let out: string;
  try {
    out = execFileSync('nvidia-smi', [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'], { encoding: 'utf8' });
  } catch (e) {
    throw new Error(`nvidia-smi --query-gpu=${fields.join(',')} failed: ${(e as Error).message.split('\n')[0]}`);
  }
  return out
    .trim()
    .split('\n')
    .map((line) => {
      const cells = line.split(',').map((c) => c.trim());
      return Object.fromEntries(fields.map((f, i) => [f, cells[i] ?? '']));
    });
}

/** Formats CUDA's 16 UUID bytes the way nvidia-smi prints them. */
function formatUuid(b: Uint8Array): string {
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

jest.setTimeout(60_000);

describeGpu(gpu.title, () => {
  beforeAll(() => {
    ok(cudart.cudaSetDevice(0), 'cudaSetDevice(0)');
  });

  describe('device properties', () => {
    test('cudaGetDeviceProperties(0) agrees with nvidia-smi', () => {
      const [count] = ok(cudart.cudaGetDeviceCount(), 'cudaGetDeviceCount');
      expect(count).toBeGreaterThanOrEqual(1);

      const [prop] = ok(cudart.cudaGetDeviceProperties(0), 'cudaGetDeviceProperties');
      const [busId] = ok(cudart.cudaDeviceGetPCIBusId(32, 0), 'cudaDeviceGetPCIBusId');
      expect(busId).toMatch(/^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$/i);

      // nvidia-smi lists every GPU in PCI order whatever CUDA_VISIBLE_DEVICES says: find device 0 by its bus id.
      const rows = nvidiaSmi(['name', 'memory.total', 'memory.reserved', 'uuid', 'pci.bus_id', 'compute_cap']);
      const row = rows.find((r) => r['pci.bus_id'].toLowerCase().endsWith(busId.toLowerCase()));
      if (!row) throw new Error(`no nvidia-smi row has bus id ${busId}: ${JSON.stringify(rows)}`);

      expect(prop.name).toBe(row.name);
      expect(formatUuid(prop.uuid.bytes)).toBe(row.uuid);

      // nvidia-smi gives MiB; the driver keeps 'reserved' of 'total' for itself.
      const smiTotal = Number(row['memory.total']) * MiB;
      const smiUsable = (Number(row['memory.total']) - (Number(row['memory.reserved']) || 0)) * MiB;
      expect(smiTotal).toBeGreaterThan(0);
      expect(prop.totalGlobalMem).toBeGreaterThan(0);
      expect(prop.totalGlobalMem).toBeLessThanOrEqual(smiTotal);
      expect(Math.abs(prop.totalGlobalMem - smiUsable) / smiTotal).toBeLessThan(0.01);

      expect(`${prop.major}.${prop.minor}`).toBe(row.compute_cap);
      expect(prop.major).toBeGreaterThanOrEqual(7); // CUDA 13 supports sm_75 and newer
      expect(prop.multiProcessorCount).toBeGreaterThan(0);
      expect(prop.warpSize).toBe(32);
      expect(prop.maxThreadsPerBlock).toBeGreaterThanOrEqual(1024);
      expect(prop.maxThreadsDim[0]).toBeGreaterThanOrEqual(1024);
      expect(prop.maxGridSize[0]).toBe(2 ** 31 - 1);

      // The bus id string and the struct's PCI fields describe the same slot.
      const [domain, bus, devFn] = busId.split(':');
      expect(prop.pciDomainID).toBe(parseInt(domain, 16));
      expect(prop.pciBusID).toBe(parseInt(bus, 16));
      expect(prop.pciDeviceID).toBe(parseInt(devFn.split('.')[0], 16));
    });

    test('cudaDeviceGetAttribute agrees with cudaGetDeviceProperties', () => {
      const [prop] = ok(cudart.cudaGetDeviceProperties(0), 'cudaGetDeviceProperties');
      const A = cudart.cudaDeviceAttr;
      const [sms] = ok(cudart.cudaDeviceGetAttribute(A.cudaDevAttrMultiProcessorCount, 0), 'cudaDeviceGetAttribute');
      expect(sms).toBe(prop.multiProcessorCount);
      expect(ok(cudart.cudaDeviceGetAttribute(A.cudaDevAttrWarpSize, 0), 'warp size')[0]).toBe(prop.warpSize);
      expect(ok(cudart.cudaDeviceGetAttribute(A.cudaDevAttrComputeCapabilityMajor, 0), 'major')[0]).toBe(prop.major);
      expect(ok(cudart.cudaDeviceGetAttribute(A.cudaDevAttrComputeCapabilityMinor, 0), 'minor')[0]).toBe(prop.minor);
      expect(ok(cudart.cudaDeviceGetAttribute(A.cudaDevAttrL2CacheSize, 0), 'L2')[0]).toBe(prop.l2CacheSize);
      expect(ok(cudart.cudaDeviceGetAttribute(A.cudaDevAttrMaxSharedMemoryPerBlock, 0), 'smem/block')[0]).toBe(prop.sharedMemPerBlock);
    });

    test('driver and runtime versions', () => {
      const [driver] = ok(cudart.cudaDriverGetVersion(), 'cudaDriverGetVersion');
      const [runtime] = ok(cudart.cudaRuntimeGetVersion(), 'cudaRuntimeGetVersion');
      expect(driver).toBeGreaterThanOrEqual(cudart.CUDART_VERSION);
      expect(runtime).toBe(cudart.CUDART_VERSION);
      expect(runtime).toBe(cudart.CUDART_VERSION);
      expect(driver).toBeGreaterThanOrEqual(runtime);
      expect(cudart.libraryInfo().version).toBe(runtime);
      expect(cudart.getLocalRuntimeVersion()).toEqual([cudaError_t.cudaSuccess, runtime]);
    });

    test('cudaMemGetInfo: free <= total, total matches totalGlobalMem', () => {
      const [prop] = ok(cudart.cudaGetDeviceProperties(0), 'cudaGetDeviceProperties');
      const [free, total] = ok(cudart.cudaMemGetInfo(), 'cudaMemGetInfo');
      expect(free).toBeGreaterThan(0);
      expect(free).toBeLessThanOrEqual(total);
      expect(Math.abs(total - prop.totalGlobalMem) / prop.totalGlobalMem).toBeLessThan(0.01);
    });
  });

  describe('device memory', () => {
    test('cudaMalloc / cudaFree and a 64 MiB host-device-host round trip', () => {
      const bytes = 64 * MiB;
      const src = new Uint32Array(bytes / 4);
      fillPattern(src, 0x9e3779b9);
      const [free0] = ok(cudart.cudaMemGetInfo(), 'cudaMemGetInfo');
      const [d] = ok(cudart.cudaMalloc(bytes), 'cudaMalloc');
      try {
        expect(typeof d).toBe('bigint');
        expect(d).not.toBe(0n);
        const [free1] = ok(cudart.cudaMemGetInfo(), 'cudaMemGetInfo');
        expect(free0 - free1).toBeGreaterThanOrEqual(bytes);

        ok(cudart.cudaMemcpy(d, src, bytes, H2D), 'cudaMemcpy H2D');
        const back = new Uint32Array(bytes / 4);
        ok(cudart.cudaMemcpy(back, d, bytes, D2H), 'cudaMemcpy D2H');
        expect(patternMismatches(back, 0x9e3779b9)).toBe(0);
        expect(sum32(back)).toBe(sum32(src));

        // A partial copy at an offset into the allocation: words [1000, 2000).
        const part = new Uint32Array(1000);
        ok(cudart.cudaMemcpy(part, d + 4000n, 4000, D2H), 'cudaMemcpy D2H at an offset');
        expect(Array.from(part)).toEqual(Array.from(src.subarray(1000, 2000)));
      } finally {
        ok(cudart.cudaFree(d), 'cudaFree');
      }
    });

    test('cudaMemset then read back', () => {
      const n = 1 * MiB;
      const [d] = ok(cudart.cudaMalloc(n), 'cudaMalloc');
      try {
        ok(cudart.cudaMemset(d, 0xab, n), 'cudaMemset');
        ok(cudart.cudaMemset(d + 4096n, 0x5a, 100), 'cudaMemset at an offset');
        const back = new Uint8Array(n);
        ok(cudart.cudaMemcpy(back, d, n, D2H), 'cudaMemcpy D2H');
        let bad = 0;
        for (let i = 0; i < n; i++) if (back[i] !== (i >= 4096 && i < 4196 ? 0x5a : 0xab)) bad++;
        expect(bad).toBe(0);
        expect(back[4095]).toBe(0xab);
        expect(back[4096]).toBe(0x5a);
        expect(back[4195]).toBe(0x5a);
        expect(back[4196]).toBe(0xab);
      } finally {
        ok(cudart.cudaFree(d), 'cudaFree');
      }
    });

    test('cudaMallocPitch + cudaMemcpy2D both ways', () => {
      const width = 1000; // bytes per row
      const height = 37;
      const [d, pitch] = ok(cudart.cudaMallocPitch(width, height), 'cudaMallocPitch');
      try {
        expect(pitch).toBeGreaterThanOrEqual(width);
        const host = new Uint8Array(width * height);
        for (let i = 0; i < host.length; i++) host[i] = (i * 7 + Math.floor(i / width)) & 0xff;
        ok(cudart.cudaMemset(d, 0xee, pitch * height), 'cudaMemset');
        ok(cudart.cudaMemcpy2D(d, pitch, host, width, width, height, H2D), 'cudaMemcpy2D H2D');

        const back = new Uint8Array(width * height);
        ok(cudart.cudaMemcpy2D(back, width, d, pitch, width, height, D2H), 'cudaMemcpy2D D2H');
        expect(Buffer.compare(Buffer.from(back), Buffer.from(host))).toBe(0);

        // The rows sit `pitch` bytes apart on the device, and the padding was left alone.
        const raw = new Uint8Array(pitch * height);
        ok(cudart.cudaMemcpy(raw, d, pitch * height, D2H), 'cudaMemcpy D2H of the pitched block');
        for (let y = 0; y < height; y++) {
          expect(
            Buffer.compare(Buffer.from(raw.subarray(y * pitch, y * pitch + width)), Buffer.from(host.subarray(y * width, (y + 1) * width))),
          ).toBe(0);
          if (pitch > width) expect(raw[y * pitch + width]).toBe(0xee);
        }
      } finally {
        ok(cudart.cudaFree(d), 'cudaFree');
      }
    });

    test('cudaMalloc3D + cudaMemcpy3D both ways', () => {
      const w = 200; // bytes per row
      const h = 9;
      const depth = 5;
      const extent = cudart.make_cudaExtent(w, h, depth);
      const [pitched] = ok(cudart.cudaMalloc3D(extent), 'cudaMalloc3D');
      try {
        expect(pitched.ptr).not.toBe(0n);
        expect(pitched.pitch).toBeGreaterThanOrEqual(w);
        expect(pitched.xsize).toBe(w);
        expect(pitched.ysize).toBe(h);
        const pitch = pitched.pitch;

        const host = new Uint8Array(w * h * depth);
        for (let i = 0; i < host.length; i++) host[i] = (i * 13 + 5) & 0xff;
        const up = new cudart.cudaMemcpy3DParms({
          srcPtr: cudart.make_cudaPitchedPtr(host, w, w, h),
          dstPtr: pitched,
          extent,
          kind: H2D,
        });
        ok(cudart.cudaMemcpy3D(up), 'cudaMemcpy3D H2D');

        const back = new Uint8Array(w * h * depth);
        ok(
          cudart.cudaMemcpy3D({ srcPtr: pitched, dstPtr: cudart.make_cudaPitchedPtr(back, w, w, h), extent, kind: D2H }),
          'cudaMemcpy3D D2H',
        );
        expect(Buffer.compare(Buffer.from(back), Buffer.from(host))).toBe(0);

        // Slice z, row y starts at (z * h + y) * pitch on the device.
        const raw = new Uint8Array(pitch * h * depth);
        ok(cudart.cudaMemcpy(raw, pitched.ptr, raw.length, D2H), 'cudaMemcpy D2H of the 3D block');
        for (let z = 0; z < depth; z++) {
          for (let y = 0; y < h; y++) {
            const at = (z * h + y) * pitch;
            const want = host.subarray((z * h + y) * w, (z * h + y + 1) * w);
            expect(Buffer.compare(Buffer.from(raw.subarray(at, at + w)), Buffer.from(want))).toBe(0);
          }
        }
      } finally {
        ok(cudart.cudaFree(pitched.ptr), 'cudaFree');
      }
    });
  });

  describe('host memory', () => {
    test('cudaMallocHost: pinned memory seen from JS, copied to the device and back', () => {
      const n = 4 * MiB;
      const [hp] = ok(cudart.cudaMallocHost(n), 'cudaMallocHost');
      let d = 0n;
      try {
        const view = new Uint32Array(koffi.view(hp, n));
        fillPattern(view, 0x1234567);
        [d] = ok(cudart.cudaMalloc(n), 'cudaMalloc');
        ok(cudart.cudaMemcpy(d, hp, n, H2D), 'cudaMemcpy H2D from pinned');
        view.fill(0);
        expect(patternMismatches(view, 0x1234567)).toBe(view.length); // really cleared
        ok(cudart.cudaMemcpy(hp, d, n, D2H), 'cudaMemcpy D2H into pinned');
        expect(patternMismatches(view, 0x1234567)).toBe(0);

        // Pinned memory also works as a plain JS array argument.
        const copy = new Uint32Array(n / 4);
        ok(cudart.cudaMemcpy(copy, hp, n, cudaMemcpyKind.cudaMemcpyHostToHost), 'cudaMemcpy H2H');
        expect(patternMismatches(copy, 0x1234567)).toBe(0);
      } finally {
        if (d !== 0n) ok(cudart.cudaFree(d), 'cudaFree');
        ok(cudart.cudaFreeHost(hp), 'cudaFreeHost');
      }
    });

    test('cudaHostAlloc(cudaHostAllocMapped) + cudaHostGetDevicePointer', () => {
      const n = 1 * MiB;
      const [hp] = ok(cudart.cudaHostAlloc(n, cudart.cudaHostAllocMapped), 'cudaHostAlloc');
      let d = 0n;
      try {
        const [flags] = ok(cudart.cudaHostGetFlags(hp), 'cudaHostGetFlags');
        expect(flags & cudart.cudaHostAllocMapped).toBe(cudart.cudaHostAllocMapped);
        const [dp] = ok(cudart.cudaHostGetDevicePointer(hp, 0), 'cudaHostGetDevicePointer');
        expect(dp).not.toBe(0n);

        const view = new Uint32Array(koffi.view(hp, n));
        fillPattern(view, 0xabcdef);
        // Read the host memory through its device address, on the device.
        [d] = ok(cudart.cudaMalloc(n), 'cudaMalloc');
        ok(cudart.cudaMemcpy(d, dp, n, D2D), 'cudaMemcpy D2D from the mapped pointer');
        const back = new Uint32Array(n / 4);
        ok(cudart.cudaMemcpy(back, d, n, D2H), 'cudaMemcpy D2H');
        expect(patternMismatches(back, 0xabcdef)).toBe(0);

        // And write it from the device through the same pointer: the host sees it.
        ok(cudart.cudaMemset(d, 0x11, 64), 'cudaMemset');
        ok(cudart.cudaMemcpy(dp, d, 64, D2D), 'cudaMemcpy D2D to the mapped pointer');
        ok(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
        expect(view[0]).toBe(0x11111111);
        expect(view[15]).toBe(0x11111111);
        expect(view[16]).toBe((Math.imul(16, 2654435761) ^ 0xabcdef) >>> 0);
      } finally {
        if (d !== 0n) ok(cudart.cudaFree(d), 'cudaFree');
        ok(cudart.cudaFreeHost(hp), 'cudaFreeHost');
      }
    });

    test('cudaHostRegister / cudaHostUnregister on a Buffer', () => {
      const n = 2 * MiB;
      const buf = Buffer.alloc(n);
      const words = new Uint32Array(buf.buffer, buf.byteOffset, n / 4);
      fillPattern(words, 0x55aa);
      const [before] = ok(cudart.cudaPointerGetAttributes(buf), 'cudaPointerGetAttributes');
      expect(before.type).toBe(cudart.cudaMemoryType.cudaMemoryTypeUnregistered);

      ok(cudart.cudaHostRegister(buf, n, cudart.cudaHostRegisterMapped), 'cudaHostRegister');
      let d = 0n;
      try {
        const [attr] = ok(cudart.cudaPointerGetAttributes(buf), 'cudaPointerGetAttributes');
        expect(attr.type).toBe(cudart.cudaMemoryType.cudaMemoryTypeHost);
        expect(attr.hostPointer).toBe(koffi.address(buf));
        const [dp] = ok(cudart.cudaHostGetDevicePointer(buf, 0), 'cudaHostGetDevicePointer');
        expect(dp).toBe(attr.devicePointer);

        [d] = ok(cudart.cudaMalloc(2 * n), 'cudaMalloc');
        const zeros = d + BigInt(n);
        ok(cudart.cudaMemcpy(d, buf, n, H2D), 'cudaMemcpy H2D from registered');
        // The device writes zeros into the Buffer through its mapped device pointer.
        ok(cudart.cudaMemset(zeros, 0, n), 'cudaMemset');
        ok(cudart.cudaMemcpy(dp, zeros, n, D2D), 'cudaMemcpy D2D to the mapped pointer');
        ok(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
        expect(buf.every((b) => b === 0)).toBe(true);
        ok(cudart.cudaMemcpy(buf, d, n, D2H), 'cudaMemcpy D2H into registered');
        expect(patternMismatches(words, 0x55aa)).toBe(0);
      } finally {
        if (d !== 0n) ok(cudart.cudaFree(d), 'cudaFree');
        ok(cudart.cudaHostUnregister(buf), 'cudaHostUnregister');
      }
      const [after] = ok(cudart.cudaPointerGetAttributes(buf), 'cudaPointerGetAttributes');
      expect(after.type).toBe(cudart.cudaMemoryType.cudaMemoryTypeUnregistered);
    });

    test('cudaPointerGetAttributes on device, pinned and managed pointers', () => {
      const T = cudart.cudaMemoryType;
      const n = 1 * MiB;
      const [d] = ok(cudart.cudaMalloc(n), 'cudaMalloc');
      const [hp] = ok(cudart.cudaMallocHost(n), 'cudaMallocHost');
      const [m] = ok(cudart.cudaMallocManaged(n, cudart.cudaMemAttachGlobal), 'cudaMallocManaged');
      try {
        const [ad] = ok(cudart.cudaPointerGetAttributes(d), 'attributes of device memory');
        expect(ad.type).toBe(T.cudaMemoryTypeDevice);
        expect(ad.device).toBe(0);
        expect(ad.devicePointer).toBe(d);
        expect(ad.hostPointer).toBe(0n);
        // An interior pointer is in the same allocation.
        const [adi] = ok(cudart.cudaPointerGetAttributes(d + 100n), 'attributes of an interior pointer');
        expect(adi.type).toBe(T.cudaMemoryTypeDevice);
        expect(adi.devicePointer).toBe(d + 100n);

        const [ah] = ok(cudart.cudaPointerGetAttributes(hp), 'attributes of pinned memory');
        expect(ah.type).toBe(T.cudaMemoryTypeHost);
        expect(ah.hostPointer).toBe(hp);
        expect(ah.device).toBe(0);

        const [am] = ok(cudart.cudaPointerGetAttributes(m), 'attributes of managed memory');
        expect(am.type).toBe(T.cudaMemoryTypeManaged);
        expect(am.device).toBe(0);
        expect(am.devicePointer).toBe(m);
        expect(am.hostPointer).toBe(m);

        // Managed memory written on the device reads back on the host after a synchronize.
        ok(cudart.cudaMemset(m, 0x3c, n), 'cudaMemset of managed memory');
        ok(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
        const view = new Uint8Array(koffi.view(m, n));
        expect(view.every((b) => b === 0x3c)).toBe(true);

        const pageable = new Uint8Array(64 * 1024);
        const [ap] = ok(cudart.cudaPointerGetAttributes(pageable), 'attributes of pageable memory');
        expect(ap.type).toBe(T.cudaMemoryTypeUnregistered);
      } finally {
        ok(cudart.cudaFree(m), 'cudaFree managed');
        ok(cudart.cudaFreeHost(hp), 'cudaFreeHost');
        ok(cudart.cudaFree(d), 'cudaFree');
      }
    });
  });

  describe('streams and events', () => {
    test('a non-blocking stream: async copies, synchronize, query, flags, priority', () => {
      const n = 8 * MiB;
      const [least, greatest] = ok(cudart.cudaDeviceGetStreamPriorityRange(), 'cudaDeviceGetStreamPriorityRange');
      expect(greatest).toBeLessThanOrEqual(least);

      const [s] = ok(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
      const [sp] = ok(cudart.cudaStreamCreateWithPriority(cudart.cudaStreamNonBlocking, greatest), 'cudaStreamCreateWithPriority');
      const [src] = ok(cudart.cudaMallocHost(n), 'cudaMallocHost');
      const [dst] = ok(cudart.cudaMallocHost(n), 'cudaMallocHost');
      const [d] = ok(cudart.cudaMalloc(n), 'cudaMalloc');
      try {
        expect(s).not.toBe(0n);
        const [flags] = ok(cudart.cudaStreamGetFlags(s), 'cudaStreamGetFlags');
        expect(flags).toBe(cudart.cudaStreamNonBlocking);
        const [prio] = ok(cudart.cudaStreamGetPriority(s), 'cudaStreamGetPriority');
        expect(prio).toBe(0);
        expect(prio).toBeGreaterThanOrEqual(greatest);
        expect(prio).toBeLessThanOrEqual(least);
        expect(ok(cudart.cudaStreamGetPriority(sp), 'cudaStreamGetPriority')[0]).toBe(greatest);

        const srcView = new Uint32Array(koffi.view(src, n));
        const dstView = new Uint32Array(koffi.view(dst, n));
        fillPattern(srcView, 0x777);
        ok(cudart.cudaMemcpyAsync(d, src, n, H2D, s), 'cudaMemcpyAsync H2D');
        ok(cudart.cudaMemcpyAsync(dst, d, n, D2H, s), 'cudaMemcpyAsync D2H');
        ok(cudart.cudaStreamSynchronize(s), 'cudaStreamSynchronize');
        expect(errName(cudart.cudaStreamQuery(s)[0])).toBe('cudaSuccess');
        expect(patternMismatches(dstView, 0x777)).toBe(0);

        // The same through a JS array and the prioritized stream.
        const back = new Uint32Array(n / 4);
        ok(cudart.cudaMemcpyAsync(back, d, n, D2H, sp), 'cudaMemcpyAsync D2H to pageable memory');
        ok(cudart.cudaStreamSynchronize(sp), 'cudaStreamSynchronize');
        expect(patternMismatches(back, 0x777)).toBe(0);
      } finally {
        ok(cudart.cudaFree(d), 'cudaFree');
        ok(cudart.cudaFreeHost(dst), 'cudaFreeHost');
        ok(cudart.cudaFreeHost(src), 'cudaFreeHost');
        ok(cudart.cudaStreamDestroy(sp), 'cudaStreamDestroy');
        ok(cudart.cudaStreamDestroy(s), 'cudaStreamDestroy');
      }
    });

    test('events time a 256 MiB device-to-device copy', () => {
      const n = 256 * MiB;
      const [a] = ok(cudart.cudaMalloc(n), 'cudaMalloc');
      const [b] = ok(cudart.cudaMalloc(n), 'cudaMalloc');
      const [start] = ok(cudart.cudaEventCreate(), 'cudaEventCreate');
      const [stop] = ok(cudart.cudaEventCreate(), 'cudaEventCreate');
      const [plain] = ok(cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming), 'cudaEventCreateWithFlags');
      const stream = cudart.cudaStream_t(0);
      try {
        ok(cudart.cudaMemset(a, 0x42, n), 'cudaMemset');
        ok(cudart.cudaEventRecord(start, stream), 'cudaEventRecord start');
        ok(cudart.cudaMemcpyAsync(b, a, n, D2D, stream), 'cudaMemcpyAsync D2D');
        ok(cudart.cudaEventRecord(stop, stream), 'cudaEventRecord stop');
        ok(cudart.cudaEventRecord(plain, stream), 'cudaEventRecord (timing disabled)');
        ok(cudart.cudaEventSynchronize(stop), 'cudaEventSynchronize');
        expect(errName(cudart.cudaEventQuery(stop)[0])).toBe('cudaSuccess');
        ok(cudart.cudaEventSynchronize(plain), 'cudaEventSynchronize');
        expect(errName(cudart.cudaEventQuery(plain)[0])).toBe('cudaSuccess');

        const [ms] = ok(cudart.cudaEventElapsedTime(start, stop), 'cudaEventElapsedTime');
        expect(ms).toBeGreaterThan(0);
        expect(ms).toBeLessThan(10_000);
        // An event without timing cannot be measured.
        const [terr, none] = cudart.cudaEventElapsedTime(start, plain);
        expect(errName(terr)).toBe('cudaErrorInvalidResourceHandle');
        expect(none).toBeNull();
        cudart.cudaGetLastError();

        // The copy really happened: the first and last bytes of the destination.
        const head = new Uint8Array(4096);
        ok(cudart.cudaMemcpy(head, b, head.length, D2H), 'cudaMemcpy');
        expect(head.every((x) => x === 0x42)).toBe(true);
        ok(cudart.cudaMemcpy(head, b + BigInt(n - head.length), head.length, D2H), 'cudaMemcpy');
        expect(head.every((x) => x === 0x42)).toBe(true);
      } finally {
        ok(cudart.cudaEventDestroy(plain), 'cudaEventDestroy');
        ok(cudart.cudaEventDestroy(stop), 'cudaEventDestroy');
        ok(cudart.cudaEventDestroy(start), 'cudaEventDestroy');
        ok(cudart.cudaFree(b), 'cudaFree');
        ok(cudart.cudaFree(a), 'cudaFree');
      }
    });
  });

  describe('stream-ordered allocation', () => {
    test('default pool attributes, cudaMallocAsync / cudaFreeAsync, cudaMallocFromPoolAsync', () => {
      const P = cudart.cudaMemPoolAttr;
      const n = 4 * MiB;
      const [pool] = ok(cudart.cudaDeviceGetDefaultMemPool(0), 'cudaDeviceGetDefaultMemPool');
      expect(pool).not.toBe(0n);
      const [s] = ok(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
      const [threshold0] = ok(cudart.cudaMemPoolGetAttribute(pool, P.cudaMemPoolAttrReleaseThreshold), 'get threshold');
      expect(typeof threshold0).toBe('bigint');
      try {
        ok(cudart.cudaMemPoolSetAttribute(pool, P.cudaMemPoolAttrReleaseThreshold, 64n * BigInt(MiB)), 'set threshold');
        const [threshold] = ok(cudart.cudaMemPoolGetAttribute(pool, P.cudaMemPoolAttrReleaseThreshold), 'get threshold');
        expect(threshold).toBe(64n * BigInt(MiB));

        ok(cudart.cudaStreamSynchronize(s), 'cudaStreamSynchronize');
        const [used0] = ok(cudart.cudaMemPoolGetAttribute(pool, P.cudaMemPoolAttrUsedMemCurrent), 'used');
        expect(typeof used0).toBe('bigint');

        const [p] = ok(cudart.cudaMallocAsync(n, s), 'cudaMallocAsync');
        expect(p).not.toBe(0n);
        const host = new Uint32Array(n / 4);
        fillPattern(host, 0xfeed);
        ok(cudart.cudaMemcpyAsync(p, host, n, H2D, s), 'cudaMemcpyAsync H2D');
        const back = new Uint32Array(n / 4);
        ok(cudart.cudaMemcpyAsync(back, p, n, D2H, s), 'cudaMemcpyAsync D2H');
        ok(cudart.cudaStreamSynchronize(s), 'cudaStreamSynchronize');
        expect(patternMismatches(back, 0xfeed)).toBe(0);

        const [used1] = ok(cudart.cudaMemPoolGetAttribute(pool, P.cudaMemPoolAttrUsedMemCurrent), 'used');
        expect(typeof used1).toBe('bigint');
        expect((used1 as bigint) - (used0 as bigint)).toBeGreaterThanOrEqual(BigInt(n));
        const [attr] = ok(cudart.cudaPointerGetAttributes(p), 'cudaPointerGetAttributes');
        expect(attr.type).toBe(cudart.cudaMemoryType.cudaMemoryTypeDevice);

        ok(cudart.cudaFreeAsync(p, s), 'cudaFreeAsync');
        ok(cudart.cudaStreamSynchronize(s), 'cudaStreamSynchronize');
        const [used2] = ok(cudart.cudaMemPoolGetAttribute(pool, P.cudaMemPoolAttrUsedMemCurrent), 'used');
        expect(used2).toBe(used0);

        const [q] = ok(cudart.cudaMallocFromPoolAsync(n, pool, s), 'cudaMallocFromPoolAsync');
        expect(q).not.toBe(0n);
        ok(cudart.cudaMemsetAsync(q, 0x7f, n, s), 'cudaMemsetAsync');
        const head = new Uint8Array(4096);
        ok(cudart.cudaMemcpyAsync(head, q, head.length, D2H, s), 'cudaMemcpyAsync D2H');
        ok(cudart.cudaFreeAsync(q, s), 'cudaFreeAsync');
        ok(cudart.cudaStreamSynchronize(s), 'cudaStreamSynchronize');
        expect(head.every((x) => x === 0x7f)).toBe(true);
      } finally {
        ok(cudart.cudaMemPoolSetAttribute(pool, P.cudaMemPoolAttrReleaseThreshold, threshold0), 'restore threshold');
        ok(cudart.cudaStreamDestroy(s), 'cudaStreamDestroy');
      }
    });

    test('cudaMemPoolCreate with cudaMemPoolProps, allocate from it, destroy', () => {
      const n = 2 * MiB;
      const [pool] = ok(
        cudart.cudaMemPoolCreate({
          allocType: cudart.cudaMemAllocationType.cudaMemAllocationTypePinned,
          location: { type: cudart.cudaMemLocationType.cudaMemLocationTypeDevice, id: 0 },
        }),
        'cudaMemPoolCreate',
      );
      const [s] = ok(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
      try {
        expect(pool).not.toBe(0n);
        const [defaultPool] = ok(cudart.cudaDeviceGetDefaultMemPool(0), 'cudaDeviceGetDefaultMemPool');
        expect(pool).not.toBe(defaultPool);

        const [p] = ok(cudart.cudaMallocFromPoolAsync(n, pool, s), 'cudaMallocFromPoolAsync');
        ok(cudart.cudaStreamSynchronize(s), 'cudaStreamSynchronize');
        const [used] = ok(cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttr.cudaMemPoolAttrUsedMemCurrent), 'used');
        expect(typeof used).toBe('bigint');
        expect(used as bigint).toBeGreaterThanOrEqual(BigInt(n));
        const [reserved] = ok(cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttr.cudaMemPoolAttrReservedMemCurrent), 'reserved');
        expect(reserved as bigint).toBeGreaterThanOrEqual(used as bigint);
        // An int-valued attribute comes back as a number.
        const [reuse] = ok(cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttr.cudaMemPoolReuseAllowOpportunistic), 'reuse');
        expect(typeof reuse).toBe('number');

        ok(cudart.cudaFreeAsync(p, s), 'cudaFreeAsync');
        ok(cudart.cudaStreamSynchronize(s), 'cudaStreamSynchronize');
        const [usedAfter] = ok(cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttr.cudaMemPoolAttrUsedMemCurrent), 'used');
        expect(usedAfter).toBe(0n);
      } finally {
        ok(cudart.cudaStreamDestroy(s), 'cudaStreamDestroy');
        ok(cudart.cudaMemPoolDestroy(pool), 'cudaMemPoolDestroy');
      }
    });
  });

  describe('errors', () => {
    test('cudaSetDevice(99), a huge cudaMalloc, cudaGetLastError, and the process goes on', () => {
      const [count] = ok(cudart.cudaGetDeviceCount(), 'cudaGetDeviceCount');
      expect(count).toBeLessThan(99);
      const [serr] = cudart.cudaSetDevice(99);
      expect(errName(serr)).toBe('cudaErrorInvalidDevice');
      expect(cudart.cudaGetErrorName(serr)).toEqual([cudaError_t.cudaSuccess, 'cudaErrorInvalidDevice']);
      const [, text] = cudart.cudaGetErrorString(serr);
      expect(text).toBe('invalid device ordinal');
      cudart.cudaGetLastError();
      expect(ok(cudart.cudaGetDevice(), 'cudaGetDevice')[0]).toBe(0);

      const [merr, ptr] = cudart.cudaMalloc(2 ** 50);
      expect(errName(merr)).toBe('cudaErrorMemoryAllocation');
      expect(ptr).toBeNull();
      expect(errName(cudart.cudaPeekAtLastError()[0])).toBe('cudaErrorMemoryAllocation');
      expect(errName(cudart.cudaGetLastError()[0])).toBe('cudaErrorMemoryAllocation');
      expect(errName(cudart.cudaGetLastError()[0])).toBe('cudaSuccess');

      // Not sticky: the context still works.
      const [d] = ok(cudart.cudaMalloc(MiB), 'cudaMalloc after the failure');
      const x = new Uint8Array(MiB).fill(9);
      ok(cudart.cudaMemcpy(d, x, MiB, H2D), 'cudaMemcpy');
      const y = new Uint8Array(MiB);
      ok(cudart.cudaMemcpy(y, d, MiB, D2H), 'cudaMemcpy');
      ok(cudart.cudaFree(d), 'cudaFree');
      expect(y.every((v) => v === 9)).toBe(true);
      ok(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
    });
  });

  describe('graphs', () => {
    test('two empty nodes with a dependency; nodes and edges queried C-style', () => {
      const [g] = ok(cudart.cudaGraphCreate(0), 'cudaGraphCreate');
      try {
        const [a] = ok(cudart.cudaGraphAddEmptyNode(g, null, 0), 'cudaGraphAddEmptyNode');
        const [b] = ok(cudart.cudaGraphAddEmptyNode(g, [a], 1), 'cudaGraphAddEmptyNode');
        expect(a).not.toBe(b);
        expect(ok(cudart.cudaGraphNodeGetType(a), 'cudaGraphNodeGetType')[0]).toBe(cudart.cudaGraphNodeType.cudaGraphNodeTypeEmpty);

        const [none, numNodes] = ok(cudart.cudaGraphGetNodes(g, 0), 'cudaGraphGetNodes count');
        expect(numNodes).toBe(2);
        expect(none).toEqual([]);
        const [nodes, numNodes2] = ok(cudart.cudaGraphGetNodes(g, numNodes), 'cudaGraphGetNodes');
        expect(numNodes2).toBe(2);
        expect(nodes).toHaveLength(2);
        expect([...nodes].sort()).toEqual([a, b].sort());

        const [roots, numRoots] = ok(cudart.cudaGraphGetRootNodes(g, 1), 'cudaGraphGetRootNodes');
        expect(numRoots).toBe(1);
        expect(roots).toEqual([a]);

        const [, , , numEdges] = ok(cudart.cudaGraphGetEdges(g, 0), 'cudaGraphGetEdges count');
        expect(numEdges).toBe(1);
        const [from, to, edgeData, numEdges2] = ok(cudart.cudaGraphGetEdges(g, numEdges), 'cudaGraphGetEdges');
        expect(numEdges2).toBe(1);
        expect(from).toEqual([a]);
        expect(to).toEqual([b]);
        expect(edgeData).toHaveLength(1);
        expect(edgeData[0].type).toBe(cudart.cudaGraphDependencyType.cudaGraphDependencyTypeDefault);
      } finally {
        ok(cudart.cudaGraphDestroy(g), 'cudaGraphDestroy');
      }
    });
  });
});
