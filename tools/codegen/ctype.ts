// C types as clang spells them (`const struct cudaExtent *`, `void *const *`, `char[64]`), parsed into
// a small tree, with typedef names kept so handles and aliases can be told apart.

export type PrimName =
  | 'void'
  | 'bool'
  | 'char'
  | 'schar'
  | 'uchar'
  | 'short'
  | 'ushort'
  | 'int'
  | 'uint'
  | 'long'
  | 'ulong'
  | 'llong'
  | 'ullong'
  | 'float'
  | 'double';

export type CType =
  | { k: 'prim'; name: PrimName }
  | { k: 'enum'; name: string }
  | { k: 'record'; key: string }
  | { k: 'typedef'; name: string; to: CType }
  | { k: 'ptr'; to: CType; constTo: boolean }
  | { k: 'array'; of: CType; n: number }
  | { k: 'fn'; spelled: string };

const PRIMS: Record<string, PrimName> = {
  void: 'void',
  _Bool: 'bool',
  bool: 'bool',
  char: 'char',
  'signed char': 'schar',
  'unsigned char': 'uchar',
  short: 'short',
  'short int': 'short',
  'unsigned short': 'ushort',
  'unsigned short int': 'ushort',
  int: 'int',
  signed: 'int',
  'signed int': 'int',
  unsigned: 'uint',
  'unsigned int': 'uint',
  long: 'long',
  'long int': 'long',
  'unsigned long': 'ulong',
  'unsigned long int': 'ulong',
  'long long': 'llong',
  'long long int': 'llong',
  'unsigned long long': 'ullong',
  'unsigned long long int': 'ullong',
  float: 'float',
  double: 'double',
};

export interface TypeEnv {
  /** typedef name -> the qualType it stands for */
  typedefs: Map<string, string>;
  /** `PATH:LINE:COL` of an unnamed record or enum -> its key (the typedef that names it) */
  anonRecords: Map<string, string>;
}

export function parseCType(spelled: string, env: TypeEnv, seen: Set<string> = new Set()): CType {
  let s = spelled.trim();
  // Arrays: `T[3]`, `T[2][4]`.
  const arr = /^(.*?)((?:\[\d+\])+)$/.exec(s);
  if (arr) {
    const dims = [...arr[2].matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    let t = parseCType(arr[1], env, seen);
    for (let i = dims.length - 1; i >= 0; i--) t = { k: 'array', of: t, n: dims[i] };
    return t;
  }
  const anon = /^(?:const |volatile )*(struct|union|enum) (?:\w+::)*\((?:unnamed|anonymous)(?: struct| union| enum)? at (.+)\)$/.exec(s);
  if (anon) {
    const key = env.anonRecords.get(anon[2]);
    if (!key) throw new Error(`codegen: no record found for ${s}`);
    return anon[1] === 'enum' ? { k: 'enum', name: key } : { k: 'record', key };
  }
  // Function types and pointers to them: `void (*)(int)`, `int (uint32_t, ...)`.
  if (/\(\*\)\s*\(/.test(s)) return { k: 'ptr', to: { k: 'fn', spelled: s }, constTo: false };
  if (/^[^()]*\(.*\)$/.test(s) && !/^(struct|union|enum) \(/.test(s)) return { k: 'fn', spelled: s };
  // Pointers, innermost last: `const void *const *`.
  const ptr = /^(.*?)\s*\*\s*(const\s*)?$/.exec(s);
  if (ptr && !/\(.*\)$/.test(s)) {
    const inner = ptr[1].trim();
    const constTo = /^const\b/.test(inner) || /\bconst$/.test(inner);
    return { k: 'ptr', to: parseCType(inner, env, seen), constTo };
  }
  s = s
    .replace(/\b(const|volatile|restrict|__restrict)\b/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const tag = /^(struct|union|enum) (\w+)$/.exec(s);
  if (tag) return tag[1] === 'enum' ? { k: 'enum', name: tag[2] } : { k: 'record', key: tag[2] };
  if (PRIMS[s]) return { k: 'prim', name: PRIMS[s] };
  const td = env.typedefs.get(s);
  if (td !== undefined) {
    if (seen.has(s)) throw new Error(`codegen: typedef loop at ${s}`);
    return { k: 'typedef', name: s, to: parseCType(td, env, new Set([...seen, s])) };
  }
  throw new Error(`codegen: cannot parse C type '${spelled}'`);
}

/** Strips typedefs. */
export function resolve(t: CType): Exclude<CType, { k: 'typedef' }> {
  while (t.k === 'typedef') t = t.to;
  return t;
}

/** The C spelling of each primitive (the reduced declarations' prototypes). */
export const PRIM_C: Record<PrimName, string> = {
  void: 'void',
  bool: '_Bool',
  char: 'char',
  schar: 'signed char',
  uchar: 'unsigned char',
  short: 'short',
  ushort: 'unsigned short',
  int: 'int',
  uint: 'unsigned int',
  long: 'long',
  ulong: 'unsigned long',
  llong: 'long long',
  ullong: 'unsigned long long',
  float: 'float',
  double: 'double',
};

/** Size and alignment of a primitive on LP64 (Linux x86-64 and aarch64). */
export const PRIM_SIZE: Record<PrimName, number> = {
  void: 1,
  bool: 1,
  char: 1,
  schar: 1,
  uchar: 1,
  short: 2,
  ushort: 2,
  int: 4,
  uint: 4,
  long: 8,
  ulong: 8,
  llong: 8,
  ullong: 8,
  float: 4,
  double: 8,
};

export function isSignedPrim(p: PrimName): boolean {
  return p === 'char' || p === 'schar' || p === 'short' || p === 'int' || p === 'long' || p === 'llong';
}
