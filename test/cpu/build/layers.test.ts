// The layers import one way (the README's "Layout" section): ffi -> ffi (the struct base and support
// among them); each facade -> ffi, itself (its struct classes too) and another facade's enums and handles; core -> facades, ffi; cli -> core and the facades (what the package root re-exports).
// Nothing under src/ imports src/index.ts, and no module reaches itself again, through value or
// type-only imports. src/core is grouped into rooms (base, device, memory, …) that import one way.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const src = path.join(__dirname, '..', '..', '..', 'src');

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function resolveImport(from: string, spec: string): string {
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, `${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  throw new Error(`${path.relative(src, from)}: cannot resolve '${spec}'`);
}

/** Every relative import and re-export, and whether it brings types only. */
function edges(): Edge[] {
  const out: Edge[] = [];
  for (const f of sourceFiles(src)) {
    const sf = ts.createSourceFile(f, fs.readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (n: ts.Node): void => {
      let spec: string | undefined;
      let typeOnly = false;
      if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
        spec = n.moduleSpecifier.text;
        const c = n.importClause;
        const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
        typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
        spec = n.moduleSpecifier.text;
        typeOnly = n.isTypeOnly;
      } else if (
        ts.isImportEqualsDeclaration(n) &&
        ts.isExternalModuleReference(n.moduleReference) &&
        ts.isStringLiteral(n.moduleReference.expression)
      ) {
        spec = n.moduleReference.expression.text;
      } else if (
        ts.isCallExpression(n) &&
        n.expression.getText(sf) === 'require' &&
        n.arguments.length === 1 &&
        ts.isStringLiteral(n.arguments[0])
      ) {
        spec = n.arguments[0].text;
      } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
        spec = n.argument.literal.text;
        typeOnly = true;
      }
      if (spec?.startsWith('.')) out.push({ from: f, to: resolveImport(f, spec), typeOnly });
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

const FIXED = new Set(['ffi', 'core', 'cli']);
/** The layer of a file: its folder under src/ ('index' for src/index.ts); any other folder is a facade. */
const layerOf = (f: string) => {
  const rel = path.relative(src, f);
  return rel.includes(path.sep) ? rel.split(path.sep)[0] : 'index';
};
const isFacade = (layer: string) => layer !== 'index' && !FIXED.has(layer);
/** A facade's enums or handles module: the only part of a facade another facade may import. */
const isEnumsOrHandles = (f: string) => isFacade(layerOf(f)) && /^(enums|handles)(\.gen)?\.ts$/.test(path.basename(f));

function allowed(e: Edge): boolean {
  const a = layerOf(e.from);
  const b = layerOf(e.to);
  if (a === 'index') return true;
  if (b === 'index') return false;
  if (a === b) return true;
  switch (a) {
    case 'ffi':
      return false;
    case 'core':
      return b === 'ffi' || isFacade(b);
    case 'cli':
      return b === 'core' || isFacade(b);
    default: // a facade; another facade's enums and handles are leaves (NCCL takes the runtime's cudaStream_t)
      return b === 'ffi' || isEnumsOrHandles(e.to);
  }
}

const all = edges();

test('the import walk sees the package (a sanity check of the walker itself)', () => {
  expect(all.length).toBeGreaterThan(100);
  expect(new Set(all.map((e) => layerOf(e.from)))).toEqual(
    new Set([
      'index',
      'ffi',
      'core',
      'cli',
      'runtime',
      'driver',
      'nvrtc',
      ...[...new Set(all.map((e) => layerOf(e.from)))].filter(isFacade),
    ]),
  );
});

test('every import goes one way down the layers', () => {
  const bad = all
    .filter((e) => !allowed(e))
    .map((e) => `${path.relative(src, e.from)} -> ${path.relative(src, e.to)}${e.typeOnly ? ' (types)' : ''}`);
  expect(bad).toEqual([]);
});

test('nothing under src/ imports src/index.ts', () => {
  const front = path.join(src, 'index.ts');
  expect(all.filter((e) => e.to === front).map((e) => path.relative(src, e.from))).toEqual([]);
});

/** The strongly connected components of two or more nodes of a graph (Tarjan's algorithm): its loops. */
function loops(next: Map<string, string[]>, nodes: Iterable<string>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) found.push(comp.sort());
    }
  };
  for (const v of nodes) if (!idx.has(v)) strong(v);
  return found;
}

function graphOf(pairs: Iterable<[string, string]>): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const [a, b] of pairs) if (a !== b) next.set(a, [...(next.get(a) ?? []), b]);
  return next;
}

test('no module reaches itself again, through value or type-only imports', () => {
  const next = graphOf(all.map((e) => [path.relative(src, e.from), path.relative(src, e.to)]));
  expect(
    loops(
      next,
      sourceFiles(src).map((f) => path.relative(src, f)),
    ),
  ).toEqual([]);
});

const core = path.join(src, 'core');
/** The room of a core file: its folder under src/core ('' for src/core/index.ts). */
const roomOf = (f: string) => {
  const rel = path.relative(core, f);
  return rel.includes(path.sep) ? rel.split(path.sep)[0] : '';
};
const coreEdges = all.filter((e) => layerOf(e.from) === 'core' && layerOf(e.to) === 'core');

test('core is grouped into rooms: every module but the index sits in a folder named for its concern', () => {
  const loose = sourceFiles(core)
    .filter((f) => roomOf(f) === '')
    .map((f) => path.relative(src, f));
  expect(loose).toEqual(['core/index.ts']);
  expect(new Set(sourceFiles(core).map(roomOf).filter(Boolean)).size).toBeGreaterThanOrEqual(8);
});

test('the rooms of core import one way: no loop between rooms, and no room imports the index', () => {
  expect(coreEdges.filter((e) => roomOf(e.from) !== '' && roomOf(e.to) === '').map((e) => path.relative(src, e.from))).toEqual([]);
  const rooms = coreEdges.filter((e) => roomOf(e.from) !== '').map((e): [string, string] => [roomOf(e.from), roomOf(e.to)]);
  expect(loops(graphOf(rooms), new Set(rooms.flat()))).toEqual([]);
});

test('the exporter room sits above nvml: it imports base and nvml (and itself) only, and no other room imports it', () => {
  const from = coreEdges.filter((e) => roomOf(e.from) === 'exporter');
  expect(from.length).toBeGreaterThan(0);
  expect([...new Set(from.map((e) => roomOf(e.to)))].sort()).toEqual(['base', 'exporter', 'nvml']);
  expect(coreEdges.filter((e) => roomOf(e.to) === 'exporter' && !['exporter', ''].includes(roomOf(e.from))).map((e) => e.from)).toEqual([]);
  // Nothing below the CLI reaches the exporter but core's index (the package's root does not load it).
  expect(
    all
      .filter((e) => roomOf(e.to) === 'exporter' && layerOf(e.from) !== 'core' && layerOf(e.from) !== 'cli')
      .map((e) => path.relative(src, e.from)),
  ).toEqual([]);
});

test('the loop checks find a loop (sanity check of the checks themselves)', () => {
  expect(
    loops(
      graphOf([
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'a'],
        ['c', 'd'],
      ]),
      ['a', 'b', 'c', 'd'],
    ),
  ).toEqual([['a', 'b', 'c']]);
});
