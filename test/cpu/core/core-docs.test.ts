// Every part of core's public API has a doc comment (issue 22, item 8): each symbol that
// src/core/index.ts exports, and each public member of its classes and interfaces (constructors,
// methods, getters, properties, static or not, inherited ones included). `@internal` and private
// members are not public API and are skipped; so are declarations outside src/core (the kernel
// argument helpers core re-exports from ffi are checked where they are declared).
import * as path from 'node:path';
import * as ts from 'typescript';

const root = path.join(__dirname, '..', '..', '..');
const coreDir = path.join(root, 'src', 'core') + path.sep;
const entry = path.join(root, 'src', 'core', 'index.ts');

/** Whether a declaration carries a JSDoc with text (an `@internal`-only one does not count). */
function hasDoc(decl: ts.Declaration): boolean {
  for (const d of ts.getJSDocCommentsAndTags(decl)) {
    if (ts.isJSDoc(d) && typeof d.comment === 'string' ? d.comment.trim() !== '' : ts.isJSDoc(d) && !!d.comment?.length) return true;
  }
  return false;
}

function isInternal(decl: ts.Declaration): boolean {
  return ts.getJSDocTags(decl).some((t) => t.tagName.text === 'internal');
}

function isPrivate(decl: ts.Declaration): boolean {
  const name = ts.getNameOfDeclaration(decl);
  if (name && ts.isPrivateIdentifier(name)) return true;
  return (ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Private) !== 0;
}

function where(decl: ts.Declaration): string {
  const sf = decl.getSourceFile();
  return `${path.relative(root, sf.fileName)}:${sf.getLineAndCharacterOfPosition(decl.getStart()).line + 1}`;
}

/** Every core item checked, and those without a doc comment, as `name (file:line)`. */
function walkCoreApi(): { checked: Set<string>; missing: string[] } {
  const program = ts.createProgram([entry], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    strict: true,
    skipLibCheck: true,
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
    types: ['node'],
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  const missing = new Set<string>();
  const checked = new Set<string>();
  const seen = new Set<ts.Declaration>();

  const checkDecls = (label: string, decls: readonly ts.Declaration[] | undefined): void => {
    const ours = (decls ?? []).filter((d) => d.getSourceFile().fileName.startsWith(coreDir) && !ts.isSourceFile(d));
    if (ours.length === 0 || ours.some((d) => isInternal(d) || isPrivate(d))) return;
    if (ours.every((d) => seen.has(d))) return;
    ours.forEach((d) => seen.add(d));
    checked.add(label);
    if (!ours.some(hasDoc)) missing.add(`${label} (${where(ours[0])})`);
  };

  const checkMembers = (owner: string, props: readonly ts.Symbol[], prefix: string): void => {
    for (const p of props) {
      if (p.getName() === 'prototype') continue;
      const wellKnown = /^__@(\w+)@\d+$/.exec(p.getName());
      checkDecls(wellKnown ? `${owner}[Symbol.${wellKnown[1]}]` : `${owner}${prefix}${p.getName()}`, p.getDeclarations());
    }
  };

  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const sym = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const name = exported.getName();
    checkDecls(name, sym.getDeclarations());
    if (sym.getDeclarations()?.some((d) => isInternal(d))) continue;
    if (sym.flags & ts.SymbolFlags.Class) {
      const classDecl = sym.getDeclarations()!.find(ts.isClassDeclaration)!;
      for (const ctor of classDecl.members.filter(ts.isConstructorDeclaration)) {
        const flags = ts.getCombinedModifierFlags(ctor);
        if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || isInternal(ctor) || !ctor.body) continue;
        checkDecls(`new ${name}()`, [ctor]);
      }
      checkMembers(name, checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym)), '.');
      checkMembers(name, checker.getPropertiesOfType(checker.getTypeOfSymbolAtLocation(sym, classDecl)), '.');
    } else if (sym.flags & ts.SymbolFlags.Interface) {
      checkMembers(name, checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym)), '.');
    }
  }
  return { checked, missing: [...missing].sort() };
}

describe('core API documentation', () => {
  const { checked, missing } = walkCoreApi();

  it('walks the classes, their members, constructors, accessors and the inherited lifetime methods', () => {
    for (const item of [
      'Device',
      'Device.allocate',
      'Device.name',
      'Stream.synchronize',
      'Stream.handle',
      'new CudaError()',
      'CudaError.code',
      'MemoryPool.releaseThreshold',
      'StreamOptions.priority',
      'setAllocator',
    ]) {
      expect(checked).toContain(item);
    }
    expect([...checked].some((c) => c.endsWith('.close') || c.endsWith('[Symbol.dispose]'))).toBe(true);
    expect([...checked].some((c) => c.includes('defaultFor') || c === 'Stream.create' || c === 'StreamGraphBuilder.create')).toBe(false); // @internal
  });

  it('gives every exported core item and every public member a doc comment', () => {
    expect(missing).toEqual([]);
  });
});
