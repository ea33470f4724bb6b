// What the generator takes from clang, kept as a committed file per API (tools/codegen/model/<id>.json)
// so that the bindings can be checked and regenerated on a machine without clang: the model of the
// headers, the per-thread default stream symbols, the clang that read them, and a hash of every file
// that contributed a declaration or a macro. The headers -> model step needs clang; model -> code
// does not, and the hashes say whether the headers here are the ones the model came from.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ClangResult } from './clang';
import type { Model } from './model';

export interface ParsedApi {
  model: Model;
  /** [symbol, its per-thread default stream variant]: `cudaMemcpyAsync` -> `cudaMemcpyAsync_ptsz`. */
  perThread: [string, string][];
  /** The first line of `clang --version`. */
  clang: string;
  /** `include/<file>` (under the CUDA include folder) or a path in the repo -> sha256 of its bytes. */
  inputs: Record<string, string>;
}

export const modelDir = path.join('tools', 'codegen', 'model');

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The input files of a clang run that the model depends on, labelled independently of where this machine keeps them. */
export function inputsOf(
  runs: ClangResult[],
  cudaInc: string,
  repoRoot: string,
  substitute: Map<string, { label: string; text: string }> = new Map(),
): Record<string, string> {
  const files = new Set<string>();
  for (const cr of runs) {
    for (const l of cr.locs.values()) files.add(l.path);
    // A macro names its file relative to the folder it was found in; those outside the CUDA include
    // folder sit in headers that declarations already name.
    for (const m of cr.macros) if (fs.existsSync(path.join(cudaInc, m.file))) files.add(path.join(cudaInc, m.file));
  }
  const out: Record<string, string> = {};
  for (const f of [...files].sort()) {
    const sub = substitute.get(f);
    if (sub) {
      out[sub.label] = sha256(sub.text);
      continue;
    }
    const label = labelOf(f, cudaInc, repoRoot);
    if (label) out[label] = sha256(fs.readFileSync(f));
  }
  return sortKeys(out);
}

function labelOf(file: string, cudaInc: string, repoRoot: string): string | undefined {
  if (file.startsWith(cudaInc + '/')) return `include/${file.slice(cudaInc.length + 1)}`;
  if (file.startsWith(repoRoot + '/')) return file.slice(repoRoot.length + 1);
  return undefined; // libc and compiler headers: not part of the CUDA interface
}

/** Files whose bytes here differ from those the model was made from (or that are missing). */
export function changedInputs(p: ParsedApi, cudaInc: string, repoRoot: string): string[] {
  const bad: string[] = [];
  for (const [label, hash] of Object.entries(p.inputs)) {
    const file = label.startsWith('include/') ? path.join(cudaInc, label.slice('include/'.length)) : path.join(repoRoot, label);
    if (!fs.existsSync(file)) bad.push(`${label}: missing (looked at ${file})`);
    else if (sha256(fs.readFileSync(file)) !== hash) bad.push(`${label}: differs from the file the model was made from (${file})`);
  }
  return bad;
}

/** The committed text: stable JSON, Maps as arrays of entries, bigints as decimal strings with a mark. */
export function serialize(p: ParsedApi): string {
  const { env: _env, ...model } = p.model;
  void _env;
  const value = { clang: p.clang, inputs: p.inputs, perThread: p.perThread, model: stripPaths(model) };
  return (
    JSON.stringify(
      value,
      (_k, v) => {
        if (v instanceof Map) return { $map: [...v.entries()] };
        if (typeof v === 'bigint') return { $big: v.toString() };
        return v;
      },
      0,
    ).replace(/\},\{/g, '},\n{') + '\n'
  );
}

export function deserialize(text: string): ParsedApi {
  const v = JSON.parse(text, (_k, x) => {
    if (x && typeof x === 'object' && !Array.isArray(x)) {
      if ('$map' in x) return new Map(x.$map);
      if ('$big' in x) return BigInt(x.$big);
    }
    return x;
  });
  // The type environment only serves the parse; nothing after it reads it.
  const model = { ...v.model, env: { typedefs: new Map(), anonRecords: new Map() } } as Model;
  return { model, perThread: v.perThread, clang: v.clang, inputs: v.inputs };
}

export function readParsed(repoRoot: string, id: string): ParsedApi {
  const file = path.join(repoRoot, modelDir, `${id}.json`);
  if (!fs.existsSync(file)) throw new Error(`codegen: no committed model at ${file}; run \`npm run generate\` where clang-14 is installed`);
  return deserialize(fs.readFileSync(file, 'utf8'));
}

// A source location's absolute path depends on where this machine keeps the headers and the repo;
// the emitters use only the file name and line.
function stripPaths(x: unknown): unknown {
  // clang spells an unnamed record by where it is: `struct (unnamed struct at /abs/path/nvml-decls.h:384:1)`.
  if (typeof x === 'string') return x.replace(/(\(unnamed \w+ at )[^():]*\/([^/():]+:\d+:\d+\))/g, '$1$2');
  if (Array.isArray(x)) return x.map(stripPaths);
  if (x instanceof Map) return new Map([...x.entries()].map(([k, v]) => [k, stripPaths(v)]));
  if (x && typeof x === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x))
      o[k] = k === 'loc' && v && typeof v === 'object' ? { ...(v as object), path: (v as { file: string }).file } : stripPaths(v);
    return o;
  }
  return x;
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
