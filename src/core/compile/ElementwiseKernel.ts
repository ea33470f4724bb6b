// One-line kernels over arrays, like CuPy's ElementwiseKernel: the parameters are declared with C
// types, the operation is C++ for element `i`; buffers are arrays, plain numbers are scalars.
import * as cudart from '../../runtime';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { Device } from '../device/Device';
import { Program } from './Program';
import type { Kernel } from '../launch/Kernel';
import type { Module } from '../launch/Module';
import '../launch/extensions'; // module.kernel()
import type { Stream } from '../device/Stream';
import { openOptionalArg } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { describe, isOwnName } from '../../ffi/checks';

/** Options of an {@link ElementwiseKernel}: compile-time ones at construction, `stream` at call. */
export interface ElementwiseOptions {
  /** Code placed before the kernel (helper functions, #includes). */
  preamble?: string;
  /** Compiler options for the Program. */
  options?: readonly string[];
  /** The stream to launch on (default: the legacy default stream). */
  stream?: Stream;
}

/** C types an elementwise parameter may have → [bytes, how a scalar of it is passed]. */
const TYPES: Record<string, [number, (v: number | bigint) => cudart.KernelArg]> = {
  bool: [1, (v) => cudart.u8(Number(v))],
  char: [1, (v) => cudart.i8(Number(v))],
  'signed char': [1, (v) => cudart.i8(Number(v))],
  'unsigned char': [1, (v) => cudart.u8(Number(v))],
  short: [2, (v) => cudart.i16(Number(v))],
  'unsigned short': [2, (v) => cudart.u16(Number(v))],
  int: [4, (v) => cudart.i32(Number(v))],
  'unsigned int': [4, (v) => cudart.u32(Number(v))],
  unsigned: [4, (v) => cudart.u32(Number(v))],
  'long long': [8, (v) => cudart.i64(v)],
  'unsigned long long': [8, (v) => cudart.u64(v)],
  float: [4, (v) => cudart.f32(Number(v))],
  double: [8, (v) => cudart.f64(Number(v))],
};

interface Param {
  type: string;
  name: string;
  out: boolean;
}

function parseParams(list: string, out: boolean): Param[] {
  if (typeof list !== 'string')
    throw new TypeError(
      `ElementwiseKernel: the ${out ? 'output' : 'input'} parameters must be a string such as 'float x, float y', got ${describe(list)}`,
    );
  if (list.trim() === '') return [];
  return list.split(',').map((p) => {
    const m = /^\s*([A-Za-z_][\w ]*?)\s+([A-Za-z_]\w*)\s*$/.exec(p);
    const type = m?.[1].replace(/\s+/g, ' ');
    if (!m || !isOwnName(TYPES, type))
      throw new RangeError(
        `ElementwiseKernel: parameter '${p.trim()}' must be '<type> <name>' with a type among ${Object.keys(TYPES).join(', ')}`,
      );
    return { type: type!, name: m[2], out };
  });
}

/**
 * A kernel written as one line of C++ per element (CuPy's ElementwiseKernel): declare the inputs
 * and outputs, give the operation, and `call()` compiles (once per combination of array and scalar
 * parameters and architecture, cached on disk by Program) and launches it over every element.
 *
 * Holds compiled modules, which live as long as the object (nothing to close). Bad declarations
 * throw TypeError or RangeError; compile failures throw {@link CompileError}.
 *
 * @example
 * ```ts
 * const saxpy = new ElementwiseKernel('float x, float y, float a', 'float z', 'z = a * x + y', 'saxpy');
 * saxpy.call(x, y, 2.0, z);                  // x, y, z: DeviceBuffers of floats; a: a scalar
 * ```
 */
export class ElementwiseKernel {
  private readonly params: Param[];
  /** Compiled kernels by which parameters are arrays ('a' array, 's' scalar per parameter) and the architecture. */
  private readonly kernels = new Map<string, { module: Module; kernel: Kernel }>();

  /**
   * `inputs` and `outputs` declare the parameters ('float x, float y' / 'float z'); `operation`
   * is C++ run for each element index `i` with each array parameter standing for its element
   * (`z = x * a + y`).
   */
  constructor(
    inputs: string,
    outputs: string,
    /** The C++ run for each element index `i`, e.g. `'z = a * x + y'`. */
    readonly operation: string,
    /** The kernel's name (in compile logs and profilers). */
    readonly name = 'elementwise',
    private readonly options: Omit<ElementwiseOptions, 'stream'> = {},
  ) {
    checkOptions('new ElementwiseKernel', options, { preamble: true, options: true });
    this.params = [...parseParams(inputs, false), ...parseParams(outputs, true)];
    if (this.params.length === 0) throw new RangeError('ElementwiseKernel: it needs at least one parameter');
    if (!this.params.some((p) => p.out)) throw new RangeError('ElementwiseKernel: it needs at least one output parameter');
    const names = new Set<string>();
    for (const p of this.params) {
      if (names.has(p.name)) throw new RangeError(`ElementwiseKernel: parameter name '${p.name}' is used twice`);
      names.add(p.name);
    }
    if (typeof operation !== 'string' || operation.trim() === '')
      throw new TypeError("ElementwiseKernel: parameter 'operation' must be C++ code such as 'z = x + y'");
    if (!/^[A-Za-z_]\w*$/.test(name))
      throw new RangeError(`ElementwiseKernel: parameter 'name' must be a C identifier, got ${describe(name)}`);
  }

  /** The CUDA C++ source for one choice of array ('a') and scalar ('s') parameters. */
  source(shape: string): string {
    const decl = this.params.map((p, i) =>
      shape[i] === 'a' ? `${p.out ? '' : 'const '}${p.type} *__restrict__ ${p.name}_` : `${p.type} ${p.name}`,
    );
    const bind = this.params.flatMap((p, i) =>
      shape[i] === 'a' ? [`    ${p.out ? '' : 'const '}${p.type} &${p.name} = ${p.name}_[i];`] : [],
    );
    return [
      this.options.preamble ?? '',
      `extern "C" __global__ void ${this.name}(${[...decl, 'long long n'].join(', ')}) {`,
      '  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {',
      ...bind,
      `    ${this.operation.trim().replace(/;?$/, ';')}`,
      '  }',
      '}',
      '',
    ].join('\n');
  }

  /**
   * Runs the operation over every element: one argument per parameter, a DeviceBuffer for an array
   * (all of the same length in elements) or a number/bigint for a scalar input; options last.
   */
  call(...args: (DeviceBuffer | number | bigint | ElementwiseOptions)[]): void {
    const last = args[args.length - 1];
    const opts = last && typeof last === 'object' && !(last instanceof DeviceBuffer) ? (args.pop() as ElementwiseOptions) : {};
    if (args.length !== this.params.length)
      throw new RangeError(
        `ElementwiseKernel(${this.name}): it takes ${this.params.length} arguments (${this.params.map((p) => p.name).join(', ')}), got ${args.length}`,
      );
    let n = -1;
    let device: Device | null = null;
    const shape = this.params
      .map((p, i) => {
        const a = args[i];
        if (a instanceof DeviceBuffer) {
          if (a.isClosed) throw new Error(`ElementwiseKernel(${this.name}).call: parameter '${p.name}' is a DeviceBuffer that was closed`);
          const count = a.size / TYPES[p.type][0];
          if (!Number.isInteger(count))
            throw new RangeError(`ElementwiseKernel(${this.name}): '${p.name}' has ${a.size} bytes, not a whole number of ${p.type}`);
          if (n >= 0 && count !== n)
            throw new RangeError(`ElementwiseKernel(${this.name}): '${p.name}' has ${count} elements, the arrays before it ${n}`);
          n = count;
          device ??= a.device;
          return 'a';
        }
        if (p.out) throw new TypeError(`ElementwiseKernel(${this.name}): output '${p.name}' must be a DeviceBuffer, got ${typeof a}`);
        if (typeof a !== 'number' && typeof a !== 'bigint')
          throw new TypeError(`ElementwiseKernel(${this.name}): '${p.name}' must be a DeviceBuffer or a number, got ${typeof a}`);
        return 's';
      })
      .join('');
    // The preamble and compiler options belong to the constructor: a call takes only its stream.
    checkOptions<Pick<ElementwiseOptions, 'stream'>>(`ElementwiseKernel(${this.name}).call`, opts, { stream: true });
    openOptionalArg(opts.stream, 'Stream', `ElementwiseKernel(${this.name}).call`, 'options.stream');
    if (n === 0) return;
    const { kernel } = this.compiled(shape, device!);
    const values = this.params.map((p, i) => (shape[i] === 'a' ? (args[i] as DeviceBuffer) : TYPES[p.type][1](args[i] as number | bigint)));
    const blocks = Math.min(Math.ceil(n / 256), device!.properties.multiProcessorCount * 32);
    kernel.launch({ grid: blocks, block: 256, stream: opts.stream }, ...values, cudart.i64(n));
  }

  private compiled(shape: string, device: Device): { module: Module; kernel: Kernel } {
    const key = `${shape}@${device.computeCapability.join('')}`;
    let k = this.kernels.get(key);
    if (!k) {
      const module = Program.compile(this.source(shape), { name: `${this.name}.cu`, options: this.options.options, arch: device }).load();
      this.kernels.set(key, (k = { module, kernel: module.kernel(this.name) }));
    }
    return k;
  }
}
