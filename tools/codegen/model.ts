// Turns clang's AST of the CUDA headers into the generator's model: enums, records with their
// x86-64 layout, typedefs, functions with their doc brief, and the #define constants.
import type { AstNode, ClangResult, SourceLoc } from './clang';
import { type CType, type TypeEnv, parseCType, resolve, PRIM_SIZE } from './ctype';

export interface EnumModel {
  name: string;
  typedefs: string[];
  values: { name: string; value: bigint; doc: string }[];
  loc: SourceLoc;
  doc: string;
  /** Bytes the enum takes in a struct or as an argument. */
  size: number;
}

export interface FieldModel {
  name: string;
  type: CType;
  spelled: string;
  offset: number;
  size: number;
  doc: string;
  /** The path g++ needs in offsetof: `res.array.array` for a member of an unnamed member. */
  cPath: string;
}

export interface RecordModel {
  key: string;
  /** TypeScript class name. */
  name: string;
  kind: 'struct' | 'union';
  fields: FieldModel[];
  size: number;
  align: number;
  loc: SourceLoc;
  doc: string;
  typedefs: string[];
  /** Declared but never defined (the handles' targets). */
  opaque: boolean;
  /** How C names it: `struct cudaExtent`, or a typedef name for a record that has no tag. */
  cName: string;
  /** For an unnamed record: the named record it sits in and the member path to it. */
  owner?: { key: string; path: string };
  /** An unnamed member without a name: its fields were folded into the record that holds it. */
  flattened?: boolean;
}

export interface ParamModel {
  name: string;
  type: CType;
  spelled: string;
}

export interface FunctionModel {
  /** The name users call it by (cuMemAlloc). */
  name: string;
  /** The symbol the library exports (cuMemAlloc_v2): the header #defines the name to it. */
  symbol: string;
  ret: CType;
  retSpelled: string;
  params: ParamModel[];
  loc: SourceLoc;
  doc: string;
  /** Documentation of each parameter, from the header's \param lines. */
  paramDocs: Record<string, string>;
  /** What the header's \return (or \returns) says: for most functions, the statuses it returns. */
  returnDoc: string;
}

export interface MacroModel {
  name: string;
  body: string;
  file: string;
}

export interface Model {
  enums: Map<string, EnumModel>;
  /** enumerator name -> its enum */
  enumerators: Map<string, { enumName: string; value: bigint }>;
  records: Map<string, RecordModel>;
  typedefs: Map<string, { spelled: string; type: CType; loc: SourceLoc; doc: string }>;
  functions: Map<string, FunctionModel>;
  macros: MacroModel[];
  env: TypeEnv;
  /**
   * `static inline T f(...) { return g(...); }` of the chosen headers: f's name, doc and place, and
   * the exported g it calls (nvJitLink's `nvJitLinkCreate` calls `__nvJitLinkCreate_13_0`).
   */
  inlineWrappers: Map<string, { callee: string; loc: SourceLoc; doc: string; paramDocs: Record<string, string>; returnDoc: string }>;
}

export function buildModel(cr: ClangResult, headerFiles: Set<string>): Model {
  const top = cr.ast.inner ?? [];
  const src = sourceOf(cr);
  const env: TypeEnv = { typedefs: new Map(), anonRecords: new Map() };
  // Pass 1 names every record and collects typedefs, so that types can be parsed in pass 2.
  const recordNodes = nameDeclarations(top, env, src);
  const model: Model = {
    enums: new Map(),
    enumerators: new Map(),
    records: new Map(),
    typedefs: new Map(),
    functions: new Map(),
    macros: cr.macros,
    env,
    inlineWrappers: new Map(),
  };
  readEnums(top, model, src);
  // Typedefs are parsed now that every record has a key.
  readTypedefs(top, model, src);
  readRecords(model, recordNodes, src);
  readFunctions(top, model, src, headerFiles);
  return model;
}

/** Where clang's nodes were written, and which of them the model takes. */
interface Source {
  /** Where clang saw the node. */
  raw(n: AstNode): SourceLoc;
  /** Where the node is in the original header: a reduced header (tools/codegen/*-decls.h) marks each line with it. */
  loc(n: AstNode): SourceLoc;
  /**
   * Declarations of the CUDA headers (or of a reduced header's `#line "nvrtc.h"`), not of libc or
   * the compiler or the stand-ins for foreign headers.
   */
  inCuda(n: AstNode): boolean;
}

function sourceOf(cr: ClangResult): Source {
  const raw = (n: AstNode): SourceLoc => cr.locs.get(n.id) ?? { file: '?', line: 0, col: 0, path: '?' };
  const loc = (n: AstNode): SourceLoc => {
    const l = raw(n);
    if (!l.path.endsWith('-decls.h')) return l;
    const m = /\/\* @([\w.]+):(\d+) \*\/\s*$/.exec(sourceLines(l.path)[l.line - 1] ?? '');
    return m ? { ...l, file: m[1], line: Number(m[2]) } : l;
  };
  const inCuda = (n: AstNode) => {
    const p = loc(n).path;
    return p !== '?' && !p.startsWith('<') && !p.startsWith('/usr/include') && !p.startsWith('/usr/lib') && !p.includes('/stubs/');
  };
  return { raw, loc, inCuda };
}

/** A record's declaration with the names the model gives it. */
interface RecordNode {
  node: AstNode;
  name: string;
  owner?: { key: string; path: string };
  cName: string;
}

/**
 * Pass 1: every record by its key, unnamed ones named after the typedef or member that owns them,
 * and every typedef's spelling in `env` (unnamed enums get their typedef's name here too).
 */
function nameDeclarations(top: AstNode[], env: TypeEnv, src: Source): Map<string, RecordNode> {
  const names: Names = { nodes: new Map(), env, src };
  for (let i = 0; i < top.length; i++) {
    const n = top[i];
    if (n.kind === 'EnumDecl' && !n.name) {
      // typedef enum { ... } Name;
      const td = top.slice(i + 1, i + 3).find((x) => x.kind === 'TypedefDecl' && ownedTag(x) === n.id);
      if (td) {
        const l = src.raw(n);
        env.anonRecords.set(`${l.path}:${l.line}:${l.col}`, td.name!);
        n.name = td.name;
      }
    }
    if (n.kind === 'RecordDecl') {
      if (n.name) nameRecord(names, n, n.name);
      else {
        // typedef struct { ... } Name;
        const td = top.slice(i + 1, i + 3).find((x) => x.kind === 'TypedefDecl' && ownedTag(x) === n.id);
        nameRecord(names, n, td?.name ?? `anon_${n.id}`);
      }
    } else if (n.kind === 'TypedefDecl' && !n.isImplicit) {
      env.typedefs.set(n.name!, n.type!.qualType);
    }
  }
  return names.nodes;
}

interface Names {
  nodes: Map<string, RecordNode>;
  env: TypeEnv;
  src: Source;
}

/**
 * Names record `n` and the records declared inside it. `scope` is the C++ scope a named nested
 * record lives in (C puts it at file scope; the g++ checks need the C++ name).
 */
function nameRecord(names: Names, n: AstNode, name: string, owner?: { key: string; path: string }, scope = ''): void {
  const key = n.name ?? `${name}`;
  const cName = n.name ? `${n.tagUsed} ${scope}${n.name}` : owner ? '' : name;
  const l = names.src.raw(n);
  if (!n.name) names.env.anonRecords.set(`${l.path}:${l.line}:${l.col}`, key);
  const prev = names.nodes.get(key);
  if (!prev || (n.completeDefinition && !prev.node.completeDefinition)) names.nodes.set(key, { node: n, name, owner, cName });
  // Members that are themselves unnamed records take the member's name.
  const inner = n.inner ?? [];
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c.kind !== 'RecordDecl') continue;
    if (c.name) {
      nameRecord(names, c, c.name, undefined, n.name ? `${scope}${n.name}::` : scope);
      continue;
    }
    const f = inner.slice(i + 1).find((x) => x.kind === 'FieldDecl');
    const member = f?.name && /\((unnamed|anonymous) /.test(f.type?.qualType ?? '') ? f.name : `anon${i}`;
    const parentPath = owner ? `${owner.path}.` : '';
    // A member that is an array of the unnamed record: its first element stands for the type.
    const dims = f && f.name === member ? (/((?:\[\d+\])+)$/.exec(f.type?.qualType ?? '')?.[1].match(/\[/g)?.length ?? 0) : 0;
    nameRecord(names, c, `${name}_${member}`, { key: owner?.key ?? key, path: `${parentPath}${member}${'[0]'.repeat(dims)}` }, scope);
  }
}

/** Enums with their values (an enumerator without an initializer is the one before it plus one). */
function readEnums(top: AstNode[], model: Model, src: Source): void {
  for (const n of top) {
    if (n.kind !== 'EnumDecl' || !n.name || !src.inCuda(n)) continue;
    const values: EnumModel['values'] = [];
    let next = 0n;
    for (const c of n.inner ?? []) {
      if (c.kind !== 'EnumConstantDecl') continue;
      const init = findValue(c);
      const v = init !== undefined ? BigInt(init) : next;
      values.push({ name: c.name!, value: v, doc: docText(c) });
      model.enumerators.set(c.name!, { enumName: n.name, value: v });
      next = v + 1n;
    }
    const min = values.reduce((a, b) => (b.value < a ? b.value : a), 0n);
    const max = values.reduce((a, b) => (b.value > a ? b.value : a), 0n);
    const size = min >= -(2n ** 31n) && max <= 2n ** 32n - 1n ? 4 : 8;
    model.enums.set(n.name, { name: n.name, typedefs: [], values, loc: src.loc(n), doc: docText(n), size });
  }
}

function readTypedefs(top: AstNode[], model: Model, src: Source): void {
  for (const n of top) {
    if (n.kind !== 'TypedefDecl' || n.isImplicit || !src.inCuda(n)) continue;
    const type = parseCType(n.type!.qualType, model.env);
    model.typedefs.set(n.name!, { spelled: n.type!.qualType, type, loc: src.loc(n), doc: docText(n) });
    const r = resolve(type);
    if (r.k === 'enum' && model.enums.has(r.name)) model.enums.get(r.name)!.typedefs.push(n.name!);
  }
}

/** Records of the CUDA headers with their layout, and the typedefs that name each. */
function readRecords(model: Model, nodes: Map<string, RecordNode>, src: Source): void {
  const layouts = new Layouts(model, nodes, src);
  for (const key of nodes.keys()) {
    if (!src.inCuda(nodes.get(key)!.node)) continue;
    model.records.set(key, layouts.of(key));
  }
  for (const [name, td] of model.typedefs) {
    const r = resolve(td.type);
    if (r.k === 'record' && model.records.has(r.key) && r.key !== name) model.records.get(r.key)!.typedefs.push(name);
  }
}

/** Records laid out as x86-64 C lays them out, each once, the records they hold first. */
class Layouts {
  private readonly done = new Map<string, RecordModel>();

  constructor(
    private readonly model: Model,
    private readonly nodes: Map<string, RecordNode>,
    private readonly src: Source,
  ) {}

  of(key: string): RecordModel {
    const done = this.done.get(key);
    if (done) return done;
    const ent = this.nodes.get(key);
    if (!ent) throw new Error(`codegen: unknown record ${key}`);
    const { node, name, owner, cName } = ent;
    const kind = node.tagUsed === 'union' ? 'union' : 'struct';
    const rec: RecordModel = {
      key,
      name,
      cName,
      kind,
      fields: [],
      size: 0,
      align: 1,
      loc: this.src.loc(node),
      doc: docText(node),
      typedefs: [],
      opaque: !node.completeDefinition,
      owner,
    };
    this.done.set(key, rec);
    if (rec.opaque) return rec;
    let off = 0;
    let align = alignAttr(node) ?? 1;
    let size = 0;
    for (const f of node.inner ?? []) {
      if (f.kind !== 'FieldDecl') continue;
      if (f.isBitfield) throw new Error(`codegen: bit-field ${key}.${f.name} is not supported`);
      const type = parseCType(f.type!.qualType, this.model.env);
      const { size: fs, align: fa0 } = this.sizeAlign(type);
      const fa = Math.max(fa0, alignAttr(f) ?? 1);
      const at = kind === 'union' ? 0 : roundUp(off, fa);
      align = Math.max(align, fa);
      if (!f.name) {
        // An unnamed struct or union member: its fields belong to this record.
        const sub = this.of((resolve(type) as { key: string }).key);
        sub.flattened = true;
        for (const sf of sub.fields) rec.fields.push({ ...sf, offset: at + sf.offset, cPath: sf.cPath });
      } else {
        rec.fields.push({ name: f.name, type, spelled: f.type!.qualType, offset: at, size: fs, doc: docText(f), cPath: f.name });
      }
      off = at + fs;
      size = Math.max(size, off);
    }
    rec.size = roundUp(size, align);
    rec.align = align;
    return rec;
  }

  private sizeAlign(t: CType): { size: number; align: number } {
    const r = resolve(t);
    switch (r.k) {
      case 'prim':
        return { size: PRIM_SIZE[r.name], align: PRIM_SIZE[r.name] };
      case 'enum': {
        const s = this.model.enums.get(r.name)?.size ?? 4;
        return { size: s, align: s };
      }
      case 'ptr':
        return { size: 8, align: 8 };
      case 'array': {
        const e = this.sizeAlign(r.of);
        return { size: e.size * r.n, align: e.align };
      }
      case 'record': {
        const rec = this.of(r.key);
        return { size: rec.size, align: rec.align };
      }
      case 'fn':
        throw new Error(`codegen: a function type has no size (${r.spelled})`);
    }
  }
}

/** Functions declared by the chosen headers, and their static inline helpers that only forward a call. */
function readFunctions(top: AstNode[], model: Model, src: Source, headerFiles: Set<string>): void {
  for (const n of top) {
    if (n.kind !== 'FunctionDecl' || !headerFiles.has(src.loc(n).file)) continue;
    const body = (n.inner ?? []).find((x) => x.kind === 'CompoundStmt');
    if (body) {
      // A static inline helper; one that only forwards to another function is remembered.
      const callee = forwardedCall(body);
      // The header's own text first: clang does not attach nvJitLink.h's comments across its #ifndef.
      if (callee)
        model.inlineWrappers.set(n.name!, {
          callee,
          loc: src.loc(n),
          doc: briefFromSource(src.raw(n)) || functionDoc(n).brief,
          paramDocs: functionDoc(n).params,
          returnDoc: returnsFromSource(src.raw(n)) || functionDoc(n).returns,
        });
      continue;
    }
    model.functions.set(n.name!, functionOf(n, model.env, src));
  }
}

function functionOf(n: AstNode, env: TypeEnv, src: Source): FunctionModel {
  const qt = n.type!.qualType;
  const retSpelled = qt.slice(0, qt.indexOf('(')).trim();
  const params: ParamModel[] = (n.inner ?? [])
    .filter((p) => p.kind === 'ParmVarDecl')
    .map((p, i) => ({ name: p.name ?? `arg${i}`, type: parseCType(p.type!.qualType, env), spelled: p.type!.qualType }));
  const { brief: astBrief, params: paramDocs, returns: astReturns } = functionDoc(n);
  const returnDoc = returnsFromSource(src.raw(n)) || astReturns;
  const brief = astBrief || briefFromSource(src.raw(n));
  return {
    name: n.name!,
    symbol: n.name!,
    ret: parseCType(retSpelled, env),
    retSpelled,
    params,
    loc: src.loc(n),
    doc: brief,
    paramDocs,
    returnDoc,
  };
}

/** `{ return g(...); }`: the name g, or undefined for any other body. */
function forwardedCall(body: AstNode): string | undefined {
  const stmts = body.inner ?? [];
  if (stmts.length !== 1 || stmts[0].kind !== 'ReturnStmt') return undefined;
  let e: AstNode | undefined = stmts[0].inner?.[0];
  while (e && e.kind !== 'CallExpr') e = e.kind === 'ImplicitCastExpr' || e.kind === 'ParenExpr' ? e.inner?.[0] : undefined;
  let f: AstNode | undefined = e?.inner?.[0];
  while (f && f.kind === 'ImplicitCastExpr') f = f.inner?.[0];
  return f?.kind === 'DeclRefExpr' && f.referencedDecl?.kind === 'FunctionDecl' ? f.referencedDecl.name : undefined;
}

function ownedTag(td: AstNode): string | undefined {
  const walk = (n: AstNode): string | undefined => {
    if (n.ownedTagDecl) return n.ownedTagDecl.id;
    if (n.decl && n.kind === 'RecordType') return n.decl.id;
    for (const c of n.inner ?? []) {
      const r = walk(c);
      if (r) return r;
    }
    return undefined;
  };
  return walk(td);
}

function alignAttr(n: AstNode): number | undefined {
  const a = (n.inner ?? []).find((x) => x.kind === 'AlignedAttr');
  if (!a) return undefined;
  const v = findValue(a);
  return v === undefined ? 16 : Number(v);
}
function findValue(n: AstNode): string | undefined {
  if (n.value !== undefined && n.kind === 'ConstantExpr') return n.value;
  for (const c of n.inner ?? []) {
    const v = findValue(c);
    if (v !== undefined) return v;
  }
  return undefined;
}

const roundUp = (n: number, a: number) => Math.ceil(n / a) * a;

/**
 * What a block command of a declaration's doc comment adds to its text: `\\brief` its words,
 * `\\deprecated` and `\\note` a sentence that says so; the others (`\\sa`, `\\return`) nothing.
 */
const BLOCK_LEADS = new Map([
  ['brief', ''],
  ['deprecated', 'Deprecated:'],
  ['note', 'Note:'],
]);

/**
 * The plain text of a declaration's doc comment, whitespace folded. A section's comment that clang
 * attaches to the declaration after it (`___MANBRIEF___ …`, the manual's group text) is not its own.
 */
export function docText(n: AstNode): string {
  const fc = (n.inner ?? []).find((x) => x.kind === 'FullComment');
  if (!fc) return '';
  const parts: string[] = [];
  const walk = (c: AstNode) => {
    if (c.kind === 'TextComment') parts.push(c.text ?? '');
    if (c.kind === 'InlineCommandComment') parts.push(inlineArgs(c));
    if (c.kind === 'ParamCommandComment') return;
    if (c.kind === 'BlockCommandComment') {
      const lead = BLOCK_LEADS.get(c.name ?? '');
      if (lead === undefined) return;
      parts.push(lead);
    }
    for (const x of c.inner ?? []) walk(x);
  };
  walk(fc);
  const text = fold(parts.join(' '));
  return text.includes('___MANBRIEF___') ? '' : text;
}

function functionDoc(n: AstNode): { brief: string; params: Record<string, string>; returns: string } {
  const fc = (n.inner ?? []).find((x) => x.kind === 'FullComment');
  const params: Record<string, string> = {};
  let brief = '';
  let returns = '';
  const text = (c: AstNode): string => {
    const parts: string[] = [];
    const walk = (x: AstNode) => {
      if (x.kind === 'TextComment') parts.push(x.text ?? '');
      if (x.kind === 'InlineCommandComment') parts.push(inlineArgs(x));
      for (const y of x.inner ?? []) walk(y);
    };
    walk(c);
    return fold(parts.join(' '));
  };
  // The \return section runs on through the paragraphs after it (a list of statuses, one a line)
  // up to the next command.
  let inReturn = false;
  for (const c of fc?.inner ?? []) {
    if (c.kind === 'BlockCommandComment' && c.name === 'brief') brief = text(c);
    if (c.kind === 'ParamCommandComment' && c.param) params[c.param] = text(c).replace(/^- /, '');
    if (c.kind !== 'ParagraphComment')
      inReturn = c.kind === 'BlockCommandComment' && (c.name === 'return' || c.name === 'returns') && !returns;
    if (inReturn) returns = fold(`${returns} ${text(c)}`);
  }
  if (!brief) {
    const para = (fc?.inner ?? []).find((c) => c.kind === 'ParagraphComment' && text(c));
    if (para) brief = text(para).split(/(?<=\.)\s/)[0];
  }
  return { brief, params, returns };
}

const sourceCache = new Map<string, string[]>();
/** The `\brief` of the doc comment just above a declaration, read from the header itself (clang
 * does not attach a comment to every declaration that a macro spells). */
function sourceLines(file: string): string[] {
  let lines = sourceCache.get(file);
  if (!lines) {
    try {
      lines = require('node:fs').readFileSync(file, 'utf8').split('\n') as string[];
    } catch {
      lines = [];
    }
    sourceCache.set(file, lines);
  }
  return lines;
}

function briefFromSource(l: SourceLoc): string {
  const lines = sourceLines(l.path);
  let i = l.line - 2;
  // A line's code without a trailing plain comment (a reduced header's `/* @nvml.h:5280 */` mark):
  // a declaration above ends the search, so a function without a doc comment does not take the
  // comment of the one before it.
  const code = (s: string) => s.replace(/\/\*(?!\*).*?\*\/\s*$/, '').trimEnd();
  while (i >= 0 && !code(lines[i]).includes('*/')) {
    if (/[;}]$/.test(code(lines[i]))) return '';
    i--;
  }
  while (i >= 0 && !lines[i].includes('/**')) i--;
  const out: string[] = [];
  for (let j = i; j < l.line && j >= 0; j++) {
    const b = /\\brief\s+(.*)$/.exec(lines[j]);
    if (b || out.length) {
      const t = b ? b[1] : lines[j].replace(/^\s*\*\s?/, '');
      // A one-line `/** \brief text */` (as a reduced header writes it).
      if (b && t.includes('*/')) return fold(plainWords(t.slice(0, t.indexOf('*/'))));
      // The summary ends at a blank line, the comment's end or the next command (`\param`).
      if (!t.trim() || lines[j].includes('*/') || (!b && /^[\\@]\w/.test(t.trim()))) break;
      out.push(t);
    }
  }
  return fold(plainWords(out.join(' ')));
}

/** Text with the inline doc commands (`\\p name`, `\\c code`) reduced to their words. */
const plainWords = (t: string) => t.replace(/[\\@](?:p|c|e|b|a|em)\s+/g, '');

/**
 * The `\\return` (or `@return`) section of the doc comment just above a declaration, read from the
 * header (clang drops the statuses NVVM and nvJitLink spell as `\\link … \\endlink`): the lines up
 * to the next command or the end of the comment, link and ref commands removed.
 */
function returnsFromSource(l: SourceLoc): string {
  const lines = sourceLines(l.path);
  let end = l.line - 2;
  while (end >= 0 && !lines[end].includes('*/')) {
    if (/[;}]\s*$/.test(lines[end].replace(/\/\*(?!\*).*?\*\/\s*$/, ''))) return '';
    end--;
  }
  let start = end;
  while (start >= 0 && !lines[start].includes('/**')) start--;
  if (start < 0) return '';
  const body = lines
    .slice(start, end + 1)
    .join('\n')
    .replace(/^[^]*?\/\*\*/, '')
    .replace(/\*\/[^]*$/, '');
  const m = /[\\@]returns?\b([^]*?)(?=\n\s*\*?\s*[\\@](?!link|endlink|ref|p\b|c\b|e\b|b\b|em\b)\w|$)/.exec(body);
  if (!m) return '';
  return fold(
    plainWords(
      m[1]
        .replace(/^\s*\*/gm, ' ')
        .replace(/[\\@](link|ref)\s+(?:#|::)?\w+(?=\s)|[\\@]endlink/g, (x, cmd) => (cmd === 'ref' ? x.replace(/^[\\@]ref\s+/, '') : ''))
        .replace(/::/g, ''),
    ),
  );
}

/** `\\p name`, `\\c code`: the words a doc command stands for. */
function inlineArgs(c: AstNode): string {
  return ((c.args as string[] | undefined) ?? []).join(' ');
}

/**
 * Doc text as one plain line: whitespace folded, no space before punctuation, and what Doxygen
 * alone reads dropped: banner rules of asterisks, group marks (`@{`, `@}`), the `::` that marks a
 * reference (`::cudaEventQuery` is `cudaEventQuery`; `cudaLaunchAttributeValue::val` reads as `.val`, and
 * `to::nvrtcCreateProgram`, as an earlier fold of a reduced header's text joined it, as two words).
 */
export function fold(s: string): string {
  return s
    .replace(/(?:\*\s*){3,}|@\s*[{}]/g, ' ')
    .replace(/(^|[\s(])::(?=\w)/g, '$1')
    .replace(/\b(\w+)::(?=\w)/g, (_, w: string) => (/^[A-Za-z][a-z]*$/.test(w) ? `${w} ` : `${w}.`))
    .replace(/\s+/g, ' ')
    .replace(/\s([.,;]|:(?!:))/g, '$1')
    .trim();
}
