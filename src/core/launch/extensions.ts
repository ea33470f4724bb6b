// What the launch room adds to its own lower classes: a Module gives its Kernels, and a Kernel its
// prepared launches. Module.ts and Kernel.ts import neither for it (see base/extend.ts).
import { extend } from '../base/extend';
import { assertOpen } from '../base/lifetime';
import { Module } from './Module';
import { Kernel } from './Kernel';
import { prepareLaunch, type PreparedLaunch } from './PreparedLaunch';
import type { ParamType } from './signature';

declare module './Module' {
  interface Module {
    /**
     * The kernel called `name` (a C symbol, or a name expression of the Program it came from); the same
     * Kernel object each time. Throws Error listing the module's kernels when there is none of that name.
     */
    kernel(name: string): Kernel;
  }
}

declare module './Kernel' {
  interface Kernel {
    /**
     * The kernel with its parameter types fixed (PyCUDA's prepare): `types` as an array (`['ptr',
     * 'ptr', 'f32', 'i32']`) or the kernel's C signature (`'void saxpy(float *x, float *y, float a,
     * int n)'`). The result is called with plain numbers, `f(config, x, y, 2.0, n)`, packed into
     * memory reused by every call; `f.timed(…)` resolves with the kernel's milliseconds and
     * `f.async(…)` once it is done. Vectors and structs go by value: a CUDA vector type by its C
     * name (`'float3'` in the array, `float3 p` in a signature) takes `[x, y, z]`, `{ x, y, z }` or a
     * struct of its size; a struct given by its layout (`{ size: 24, align: 8 }`, or a struct class
     * such as `cudart.dim3`; in the array only) takes a struct of that size or its bytes.
     */
    prepare(types: string | readonly ParamType[]): PreparedLaunch;
  }
}

/** Each module's Kernel objects by the name they were asked for: the same object each time. */
const kernelsOf = new WeakMap<Module, Map<string, Kernel>>();

extend(Module, {
  kernel(name: string): Kernel {
    assertOpen(this, 'kernel');
    let kernels = kernelsOf.get(this);
    if (!kernels) kernelsOf.set(this, (kernels = new Map()));
    let k = kernels.get(name);
    if (!k) kernels.set(name, (k = new Kernel(this.kernelHandle(name), name, this)));
    return k;
  },
});

extend(Kernel, {
  prepare(types: string | readonly ParamType[]): PreparedLaunch {
    if (this.module.isClosed) throw new Error(`Kernel.prepare(${this.name}): the Module it belongs to was closed`);
    return prepareLaunch(this, types);
  },
});
