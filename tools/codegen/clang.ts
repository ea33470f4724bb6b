// Runs clang on the CUDA headers and hands back its JSON AST and the macros the headers define.
// The compiler's own view of the headers is the single source of truth for the generator.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface AstNode {
  id: string;
  kind: string;
  name?: string;
  loc?: any;
  range?: any;
  type?: { qualType: string; desugaredQualType?: string };
  inner?: AstNode[];
  value?: string;
  tagUsed?: 'struct' | 'union' | 'enum';
  completeDefinition?: boolean;
  isImplicit?: boolean;
  isBitfield?: boolean;
  text?: string;
  [k: string]: any;
}

/** Where a declaration was written: header file (relative to the include folder) and line. */
export interface SourceLoc {
  file: string;
  line: number;
  col: number;
  /** The full path, as clang names it in `(unnamed struct at PATH:LINE:COL)`. */
  path: string;
}

export interface ClangResult {
  ast: AstNode;
  /** Source location of every node that has one, keyed by node id. */
  locs: Map<string, SourceLoc>;
  /** `#define NAME body` lines, in order, with the header that defined them. */
  macros: { name: string; body: string; file: string }[];
  version: string;
}

const here = __dirname;
export const stubDir = path.join(here, 'stubs');

/** Finds the clang binary: $CLANG, then clang-14 (what CI installs), then clang. */
export function findClang(): string {
  const cands = [process.env.CLANG, 'clang-14', 'clang'].filter(Boolean) as string[];
  for (const c of cands) {
    try {
      execFileSync(c, ['--version'], { stdio: 'pipe' });
      return c;
    } catch {
      /* try the next */
    }
  }
  throw new Error(`codegen: no clang found (tried ${cands.join(', ')}); install Debian's clang-14 or set CLANG`);
}

export function cudaInclude(): string {
  const home = process.env.CUDA_HOME || process.env.CUDA_PATH || '/usr/local/cuda';
  const inc = path.join(home, 'include');
  if (!fs.existsSync(path.join(inc, 'cuda_runtime_api.h'))) {
    throw new Error(`codegen: no cuda_runtime_api.h under ${inc}; set CUDA_HOME to a CUDA 13.0 toolkit`);
  }
  return inc;
}

/** Parses `headers` (names under the CUDA include folder) as C with the given -D defines. */
export function runClang(headers: string[], defines: string[] = [], extraInclude: string[] = []): ClangResult {
  const clang = findClang();
  const inc = cudaInclude();
  const src = headers.map((h) => `#include <${h}>\n`).join('');
  const args = [
    '-x',
    'c',
    '-std=c11',
    `-I${stubDir}`,
    ...extraInclude.map((d) => `-I${d}`),
    `-I${inc}`,
    ...defines.map((d) => `-D${d}`),
    '-',
  ];
  const json = execFileSync(clang, ['-Xclang', '-ast-dump=json', '-fsyntax-only', ...args], {
    input: src,
    maxBuffer: 1 << 30,
  }).toString('utf8');
  const ast = JSON.parse(json) as AstNode;
  const pre = execFileSync(clang, ['-E', '-dD', ...args], { input: src, maxBuffer: 1 << 28 }).toString('utf8');
  const version = execFileSync(clang, ['--version']).toString().split('\n')[0];
  return { ast, locs: trackLocations(ast, inc), macros: readMacros(pre, [inc, ...extraInclude]), version };
}

// clang's JSON leaves out a location's file and line when they equal the previous location it
// printed, so the real ones come from replaying every location in output order.
function trackLocations(ast: AstNode, inc: string): Map<string, SourceLoc> {
  const locs = new Map<string, SourceLoc>();
  let file = '';
  let line = 0;
  let col = 0;
  const see = (l: any): void => {
    if (!l || typeof l !== 'object') return;
    if (l.spellingLoc || l.expansionLoc) {
      see(l.spellingLoc);
      see(l.expansionLoc);
      return;
    }
    if (l.file) file = l.file;
    if (l.line) line = l.line;
    if (l.col) col = l.col;
  };
  const rel = (f: string) => (f.startsWith(inc + '/') ? f.slice(inc.length + 1) : path.basename(f));
  const walk = (n: AstNode): void => {
    if (n.loc) {
      // A name written through a macro (the _ptsz renames) is spelled in the macro; the expansion
      // is where the declaration sits.
      see(n.loc);
      locs.set(n.id, { file: rel(file), line, col, path: file });
    }
    if (n.range) {
      see(n.range.begin);
      see(n.range.end);
    }
    for (const c of n.inner ?? []) walk(c);
  };
  walk(ast);
  return locs;
}

// Macros of the CUDA include folder and of the extra folders (where a header the toolkit lacks sits).
function readMacros(pre: string, dirs: string[]): ClangResult['macros'] {
  const out: ClangResult['macros'] = [];
  let file = '';
  for (const ln of pre.split('\n')) {
    const m = /^# \d+ "([^"]+)"/.exec(ln);
    if (m) {
      file = m[1];
      continue;
    }
    const d = /^#define (\w+)(?:[ \t]+(.*))?$/.exec(ln);
    const dir = d && dirs.find((x) => file.startsWith(x + '/'));
    if (d && dir) out.push({ name: d[1], body: (d[2] ?? '').trim(), file: file.slice(dir.length + 1) });
  }
  return out;
}
