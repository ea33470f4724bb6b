// One check for every options bag in core: a misspelt option ({ limti: 5 }, { nonblocking: true })
// is a TypeError naming the method and the key, as the struct constructors refuse unknown fields,
// instead of being ignored in silence.

/** Every key of an options type, each mapped to true: the list of what a method accepts, checked complete by the compiler. */
export type OptionKeys<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Throws a TypeError unless `options` is absent or an object whose keys are all in `allowed`; the
 * message names `method`, the key, and the closest allowed key when it looks like a misspelling.
 */
export function checkOptions<T extends object>(
  method: string,
  options: T | undefined,
  allowed: OptionKeys<NoInfer<T>>,
  param = 'options',
): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    const got = options === null ? 'null' : Array.isArray(options) ? 'an array' : `${typeof options} ${String(options)}`;
    throw new TypeError(`${method}: parameter '${param}' must be an object of options, got ${got}`);
  }
  // for…in with a lookup per key: cheap enough for a kernel launch's config.
  for (const key in options) {
    if ((allowed as Record<string, unknown>)[key] === true || !Object.prototype.hasOwnProperty.call(options, key)) continue;
    const known = Object.keys(allowed);
    const near = closest(key, known);
    const list = known.length ? `the options are ${known.join(', ')}` : 'it takes no options';
    throw new TypeError(
      `${method}: unknown option '${key}'${param === 'options' ? '' : ` in '${param}'`}${near ? ` (did you mean '${near}'?)` : ''}; ${list}`,
    );
  }
}

/**
 * Whether `options` is an object whose enumerable keys are `key` or none (so checkOptions of a table
 * that allows `key` has nothing to say): a hot path's check of `{ stream }`, without checkOptions'
 * lookup of each key in its table (issue #37: 130 instructions a copy). False sends the caller to
 * checkOptions, which decides and explains.
 */
export function onlyOption(options: unknown, key: string): boolean {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return false;
  for (const k in options) if (k !== key) return false;
  return true;
}

/** The allowed key a misspelt one most likely meant: the same but for case, or within two edits. */
function closest(key: string, known: string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase) return sameCase;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
