// jest runs each test file in a vm context whose Symbol is the context's own: it lacks the
// Symbol.dispose and Symbol.asyncDispose that Node 20 adds to the main realm's Symbol. Without them a
// `using` declaration throws ("Symbol.dispose is not defined") and the classes' [Symbol.dispose]
// methods are named "undefined". One symbol each for the context, before any module loads.
for (const name of ['dispose', 'asyncDispose']) {
  if (typeof Symbol[name] !== 'symbol') Object.defineProperty(Symbol, name, { value: Symbol(`Symbol.${name}`) });
}
