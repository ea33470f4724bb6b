// tools/lazy-core.cjs: core's index loads only what Device.get needs; the rest, and the rooms, on first use
// (the built package is checked by build/package.proof.test.ts and the start-up by bench/cpu.ts --startup).
const { lazyCore } = require('../../../tools/lazy-core.cjs') as {
  lazyCore: (js: string, rooms: string[], members: [string, string][]) => { js: string; modules: number };
};

/** A compiled index as tsc and flatten-exports write it: two rooms loaded for their effect, Device eager, two lazy modules. */
const INDEX = [
  '"use strict";',
  'Object.defineProperty(exports, "__esModule", { value: true });',
  'exports.i32 = exports.Stream = exports.Other = exports.Device = exports.warnOnLeaks = exports.check = void 0;',
  'require("./device/extensions");',
  'require("./memory/extensions");',
  'var errors_1 = require("./base/errors");',
  'exports.check = errors_1.check;',
  'var lifetime_1 = require("./base/lifetime");',
  'exports.warnOnLeaks = lifetime_1.warnOnLeaks;',
  'var Device_1 = require("./device/Device");',
  'exports.Device = Device_1.Device;',
  'var Stream_1 = require("./device/Stream");',
  'exports.Stream = Stream_1.Stream;',
  'var other_1 = require("./other");',
  'exports.Other = other_1.Renamed;',
  'var runtime_1 = require("../runtime");',
  'exports.i32 = runtime_1.i32;',
].join('\n');

/** Runs the rewritten index against stand-in modules; returns its exports and what loaded, in order. */
function load(members: [string, string][]) {
  const { js } = lazyCore(INDEX, ['./device/extensions', './memory/extensions'], members);
  const loaded: string[] = [];
  class Device {}
  const modules: Record<string, () => unknown> = {
    './base/errors': () => ({ check: 'check' }),
    './base/lifetime': () => ({ warnOnLeaks: 'warnOnLeaks' }),
    '../runtime': () => ({ i32: 'i32' }),
    './device/Device': () => ({ Device }),
    './device/Stream': () => ({ Stream: 'Stream' }),
    './other': () => ({ Renamed: 'other' }),
    './device/extensions': () =>
      Object.defineProperty(Device.prototype, 'createStream', { value: () => 'a stream', configurable: true, writable: true }),
    './memory/extensions': () => Object.defineProperty(Device.prototype, 'memoryPool', { get: () => 'the pool', configurable: true }),
  };
  const exports: Record<string, unknown> = {};
  const req = (p: string) => {
    if (!loaded.includes(p)) loaded.push(p);
    return modules[p]();
  };
  new Function('exports', 'require', js)(exports, req);
  return { exports, loaded, Device };
}

test('the index loads its eager modules only; a lazy export loads the rooms, then its module, then is a plain value', () => {
  const { exports, loaded } = load([]);
  expect(loaded).toEqual(['./base/errors', './base/lifetime', './device/Device', '../runtime']);
  expect(Object.keys(exports).sort()).toEqual(['Device', 'Other', 'Stream', 'check', 'i32', 'warnOnLeaks']);
  expect(exports.Other).toBe('other');
  expect(loaded.slice(4)).toEqual(['./device/extensions', './memory/extensions', './other']);
  expect(Object.getOwnPropertyDescriptor(exports, 'Other')).toEqual({
    value: 'other',
    writable: true,
    enumerable: true,
    configurable: true,
  });
  expect(exports.Stream).toBe('Stream');
});

test("Device's members from the rooms are stand-ins that load the rooms on first use and then are the rooms' own", () => {
  const { Device, loaded } = load([
    ['createStream', 'method'],
    ['memoryPool', 'get'],
  ]);
  const d = new Device() as { createStream(): string; memoryPool: string };
  expect(loaded).not.toContain('./device/extensions');
  expect(d.memoryPool).toBe('the pool');
  expect(loaded).toContain('./memory/extensions');
  expect(d.createStream()).toBe('a stream');
  expect(Object.getOwnPropertyDescriptor(Device.prototype, 'createStream')!.value()).toBe('a stream');
});

test('refuses an index line it does not know', () => {
  expect(() => lazyCore(INDEX + '\nconst x = require("./y").z;', ['./device/extensions', './memory/extensions'], [])).toThrow(
    /a line of the index this tool does not know/,
  );
  expect(() => lazyCore(INDEX, ['./device/extensions'], [])).toThrow(/loads \.\/memory\/extensions for its effect, and it is not a room/);
});

test("Device's module and Device.get(0) load neither the driver facade, NVML nor the attribute table: core's start-up is the root's", () => {
  const script = [
    "const { Device } = require('./src/core/device/Device');",
    'try { Device.get(0); } catch {}',
    "const loaded = Object.keys(require.cache).map((k) => require('node:path').relative(process.cwd(), k));",
    'console.log(JSON.stringify(loaded.filter((k) => /^src\\/(driver|nvml)\\/|DeviceAttributes|NvmlDevice/.test(k))));',
  ].join('\n');
  const r = require('node:child_process').spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: require('node:path').join(__dirname, '..', '..', '..'),
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual([]);
});
