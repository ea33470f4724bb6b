// Generated declarations read on the first bind, not at import: the further libraries (nvJitLink,
// nvFatbin, libNVVM) cost nothing to a program that imports cuda-bindings and never uses them.

/** An object that reads `load()`'s declarations when a function is first bound. */
export function lazyDeclarations<D extends object>(load: () => D): D {
  let d: D | undefined;
  return new Proxy({} as D, { get: (_, name) => (d ??= load())[name as keyof D] });
}
