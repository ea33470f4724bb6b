// simpleCubemapTexture: CUDA's sample of that name. A cubemap (a 3D CUDA array of six width x width
// faces, cudaMalloc3DArray with cudaArrayCubemap) is filled from the host with cudaMemcpy3D and
// read through a texture object: a kernel looks up every texel of every face with texCubemap, at
// the direction through the texel's centre, and writes it negated to linear memory. Every element
// is checked against the host's data.
//   npx tsx examples/simpleCubemapTexture.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { check, deviceLine, elapsedMs, loadKernel, runExample, verify } from './lib/runtime';

const WIDTH = 64; // texels a side of a face
const FACES = 6;
const FACE_SIZE = WIDTH * WIDTH;
const BLOCK = 8; // 8 x 8 threads a block
const K = cudart.cudaMemcpyKind;

runExample('simpleCubemapTexture', (r) => {
  console.log(deviceLine());
  const [maxCubemap] = check(
    cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrMaxTextureCubemapWidth, 0),
    'cudaDeviceGetAttribute(cudaDevAttrMaxTextureCubemapWidth)',
  );
  if (maxCubemap < WIDTH) {
    console.error(`simpleCubemapTexture: device 0's cubemaps are at most ${maxCubemap} texels wide, fewer than ${WIDTH}`);
    return false;
  }

  // Face f, row y, column x holds f * FACE_SIZE + y * WIDTH + x: every texel of the cube differs.
  const hData = new Float32Array(FACES * FACE_SIZE);
  for (let i = 0; i < hData.length; i++) hData[i] = i;

  // The cubemap: a layered 3D array of one float a texel, depth 6.
  const [channelDesc] = check(
    cudart.cudaCreateChannelDesc(32, 0, 0, 0, cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat),
    'cudaCreateChannelDesc',
  );
  const extent = cudart.make_cudaExtent(WIDTH, WIDTH, FACES);
  const [cuArray] = check(cudart.cudaMalloc3DArray(channelDesc, extent, cudart.cudaArrayCubemap), 'cudaMalloc3DArray(cudaArrayCubemap)');
  r.defer(() => cudart.cudaFreeArray(cuArray));
  const copy = new cudart.cudaMemcpy3DParms({
    srcPtr: cudart.make_cudaPitchedPtr(hData, WIDTH * 4, WIDTH, WIDTH),
    dstArray: cuArray,
    extent,
    kind: K.cudaMemcpyHostToDevice,
  });
  check(cudart.cudaMemcpy3D(copy), 'cudaMemcpy3D');

  // A texture object over the array: point sampling at normalized coordinates, as floats.
  const resDesc = new cudart.cudaResourceDesc({ resType: cudart.cudaResourceType.cudaResourceTypeArray });
  resDesc.res.array.array = cuArray;
  const { cudaAddressModeWrap: WRAP } = cudart.cudaTextureAddressMode;
  const texDesc = new cudart.cudaTextureDesc({
    normalizedCoords: 1,
    filterMode: cudart.cudaTextureFilterMode.cudaFilterModePoint,
    addressMode: [WRAP, WRAP, WRAP],
    readMode: cudart.cudaTextureReadMode.cudaReadModeElementType,
  });
  const [tex] = check(cudart.cudaCreateTextureObject(resDesc, texDesc, null), 'cudaCreateTextureObject');
  r.defer(() => cudart.cudaDestroyTextureObject(tex));

  const dData = r.malloc(hData.byteLength);
  check(cudart.cudaMemset(dData, 0xff, hData.byteLength), 'cudaMemset'); // NaNs, until the kernel writes them
  const kernel = loadKernel('samples.fatbin', 'transformCubemap');
  const grid = { x: WIDTH / BLOCK, y: WIDTH / BLOCK, z: 1 };
  console.log(
    `Covering Cubemap data array of ${WIDTH}~3 x 1: Grid size is ${grid.x} x ${grid.y}, each block has ${BLOCK} x ${BLOCK} threads`,
  );

  const start = r.event();
  const stop = r.event();
  check(cudart.cudaEventRecord(start, null), 'cudaEventRecord(start)');
  check(
    cudart.cudaLaunchKernel(kernel, grid, { x: BLOCK, y: BLOCK, z: 1 }, [cudart.ptr(dData), cudart.i32(WIDTH), cudart.u64(tex)], 0, null),
    `cudaLaunchKernel(transformCubemap<<<(${grid.x}, ${grid.y}), (${BLOCK}, ${BLOCK})>>>)`,
  );
  check(cudart.cudaGetLastError(), 'cudaGetLastError');
  check(cudart.cudaEventRecord(stop, null), 'cudaEventRecord(stop)');
  check(cudart.cudaEventSynchronize(stop), 'cudaEventSynchronize(stop)');
  const ms = elapsedMs(start, stop);
  console.log(`Processing time: ${ms.toFixed(3)} msec`);
  console.log(`${((FACES * FACE_SIZE) / (ms / 1000) / 1e6).toFixed(2)} Mtexlookups/sec`);

  const hOut = new Float32Array(hData.length);
  check(cudart.cudaMemcpy(hOut, dData, hOut.byteLength, K.cudaMemcpyDeviceToHost), 'cudaMemcpy(D2H)');
  // Point sampling at texel centres reads each texel exactly: every output is its texel negated.
  if (!verify('cubemap lookups', hOut, (i) => -hData[i])) return false;
  console.log('Comparing kernel output to expected data: all match');
  return true;
});
