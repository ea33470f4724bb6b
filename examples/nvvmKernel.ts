// nvvmKernel: a kernel written in NVVM IR (the LLVM IR that Numba, Triton and other compilers hand
// to CUDA), compiled to PTX by libNVVM with libdevice for its square root, loaded, launched and checked.
//   npx tsx examples/nvvmKernel.ts
// Exits with status 1, and one line on stderr saying why, when a device or libNVVM is missing.
import { core, nvvm } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { Program, f32, i32 } = core;
const N = 65_537;

/** NVVM IR version this libNVVM reads, for the module's !nvvmir.version. */
function irVersion(): [number, number] {
  const [err, major, , debugMajor] = nvvm.nvvmIRVersion();
  if (err !== nvvm.nvvmResult.NVVM_SUCCESS) throw new Error(`nvvmIRVersion returned ${nvvm.nvvmResult[err]}`);
  return [major, debugMajor];
}

/** y[i] = a * sqrt(x[i]) for i < n, in NVVM IR (libNVVM's LLVM 7 dialect: typed pointers). */
function kernelIr([major, debugMajor]: [number, number]): string {
  return `target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @__nv_sqrtf(float)

define void @scaledSqrt(float addrspace(1)* %x, float addrspace(1)* %y, float %a, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %cta, %ntid
  %i = add i32 %base, %tid
  %inside = icmp slt i32 %i, %n
  br i1 %inside, label %body, label %done
body:
  %idx = sext i32 %i to i64
  %px = getelementptr float, float addrspace(1)* %x, i64 %idx
  %vx = load float, float addrspace(1)* %px, align 4
  %s = call float @__nv_sqrtf(float %vx)
  %v = fmul float %s, %a
  %py = getelementptr float, float addrspace(1)* %y, i64 %idx
  store float %v, float addrspace(1)* %py, align 4
  br label %done
done:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, float addrspace(1)*, float, i32)* @scaledSqrt, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 ${major}, i32 0, i32 ${debugMajor}, i32 0}
`;
}

function main(): number {
  const dev = firstDevice('nvvmKernel');
  if (dev === null) return 1;
  console.log(`> Using CUDA Device [0]: ${dev.name} (compute capability ${dev.computeCapability.join('.')})`);

  let program;
  try {
    program = Program.compile(kernelIr(irVersion()), { language: 'nvvm', name: 'scaledSqrt.ll', arch: dev, libdevice: true });
  } catch (e) {
    console.error(`nvvmKernel: libNVVM could not compile the kernel: ${(e as Error).message.split('\n')[0]}`);
    return 1;
  }
  const ptx = program.objectCode.text;
  console.log(
    `> ${program.compiler} compiled scaledSqrt.ll to ${ptx.length} bytes of PTX for ${program.arch}${program.fromCache ? ' (from the disk cache)' : ''}`,
  );

  const mod = program.load();
  const x = Float32Array.from({ length: N }, (_, i) => i);
  const dx = dev.allocate(4 * N);
  const dy = dev.allocate(4 * N);
  dx.copyFrom(x);
  const block = 128;
  mod.kernel('scaledSqrt').launch({ grid: Math.ceil(N / block), block }, dx, dy, f32(0.5), i32(N));
  const y = dy.copyTo(new Float32Array(N));
  for (const r of [dx, dy, mod]) r.close();

  let bad = 0;
  for (let i = 0; i < N; i++) if (y[i] !== Math.fround(Math.fround(Math.sqrt(x[i])) * 0.5)) bad++;
  console.log(`> y = 0.5 * sqrt(x) for ${N} elements: ${bad === 0 ? 'all correct' : `${bad} wrong`}`);
  console.log(`Result = ${bad === 0 ? 'PASS' : 'FAIL'}`);
  return bad === 0 ? 0 : 1;
}

process.exitCode = main();
