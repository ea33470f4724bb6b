// How a room adds methods to a class of a room below it. A class never imports what imports it:
// Device knows nothing of streams, memory or graphs, yet `device.allocate()` and `stream.capture()`
// exist. The room that makes the object declares the method on the lower class (TypeScript's
// declaration merging, in the room's extensions.ts) and installs it here, once, when it loads;
// src/core/index.ts loads every room.

/** The members `methods` adds to `cls`: each one `cls`'s own (declared by the room's `declare module`), bodies typed with `this` as the class. */
type Members<T> = Partial<T> & ThisType<T>;

/**
 * Installs `methods` (methods and getters of an object literal) on `cls.prototype` as a class body
 * would: not enumerable, replaceable by a subclass. Throws Error when `cls` already has one of them.
 */
export function extend<T extends object>(cls: { readonly prototype: T; readonly name: string }, methods: Members<T>): void {
  const proto: object = cls.prototype;
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(methods))) {
    if (Object.prototype.hasOwnProperty.call(proto, name)) throw new Error(`extend(${cls.name}): ${cls.name}.${name} is already defined`);
    Object.defineProperty(proto, name, { ...d, enumerable: false, configurable: true });
  }
}
