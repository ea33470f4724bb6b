// After tsc and flatten-exports: makes `require('cuda-bindings/core')` load only what `Device.get(0)`
// needs (issue #37: core's start-up no more than the root's + 5 ms). tsc compiles core's index to an
// eager require of every room (~80 modules, and through them every library's facade); this rewrites
// dist/core/index.js so that
// - the modules in EAGER load with it (errors, lifetime, Device, the runtime's typed arguments);
// - every other module's exports are getters whose first read loads the rooms (below), then the
//   module, and replaces the module's getters with plain values (no getter left on a hot path);
// - the rooms: the modules that add methods to classes of lower rooms (base/extend.ts: `device.allocate`,
//   `stream.capture`, `module.kernel`, …). Until they load, Device's prototype holds stand-ins for the
//   members they add to it, whose first use loads them all and then calls the real member. Every
//   other core object is reached through an export of the index or a member of Device, so none exists
//   before the rooms have loaded, as when the index loaded them eagerly.
// The types are tsc's own (dist/core/index.d.ts is unchanged).
const fs = require('node:fs');
const path = require('node:path');
const { filesUnder } = require('./files-under.cjs');

/** Modules of the index that load with it: what `Device.get(0)` and a thrown CudaError need. */
const EAGER = ['./base/errors', './base/lifetime', './device/Device', '../runtime'];

const MODULE_LINE = /^var ([\w$]+) = require\("([./\w-]+)"\);$/;
const EXPORT_LINE = /^exports\.([\w$]+) = ([\w$]+)\.([\w$]+);$/;
const SIDE_EFFECT_LINE = /^require\("([./\w-]+)"\);$/;

/** The compiled core modules (paths relative to dist/core, './x/y') that add members to a class at load: the rooms. */
function roomModules(coreDir) {
  return filesUnder(coreDir, '.js')
    .filter((p) => /\(0, extend_1\.extend\)\(/.test(fs.readFileSync(p, 'utf8')))
    .map((p) => './' + path.relative(coreDir, p).replace(/\\/g, '/').replace(/\.js$/, ''))
    .sort();
}

/** The members the rooms add to Device's prototype: [name, 'method' | 'get' | 'getset'], read by loading them. */
function deviceMembers(coreDir, rooms) {
  const proto = require(path.join(coreDir, 'device', 'Device.js')).Device.prototype;
  const before = new Set(Object.getOwnPropertyNames(proto));
  for (const r of rooms) require(path.join(coreDir, r + '.js'));
  return Object.getOwnPropertyNames(proto)
    .filter((n) => !before.has(n))
    .map((n) => {
      const d = Object.getOwnPropertyDescriptor(proto, n);
      return [n, typeof d.value === 'function' ? 'method' : d.set ? 'getset' : 'get'];
    });
}

/** The helper written into the index: the rooms' loader, Device's stand-in members, and exports that load on first use. */
function helper(rooms, members) {
  return `// Written by tools/lazy-core.cjs: core's rooms and modules load on first use.
const rooms = [${rooms.map((r) => `() => require(${JSON.stringify(r)})`).join(', ')}];
const deviceMembers = ${JSON.stringify(members)};
let roomsLoaded = false;
function loadRooms() {
    if (roomsLoaded) return;
    roomsLoaded = true;
    const proto = require("./device/Device").Device.prototype;
    for (const [name] of deviceMembers) delete proto[name];
    for (const load of rooms) load();
}
function standInMembers() {
    const proto = require("./device/Device").Device.prototype;
    for (const [name, kind] of deviceMembers) {
        const d = kind === 'method'
            ? { value: function (...args) { loadRooms(); return this[name](...args); }, writable: true }
            : { get() { loadRooms(); return this[name]; }, set: kind === 'getset' ? function (v) { loadRooms(); this[name] = v; } : undefined };
        Object.defineProperty(proto, name, { ...d, enumerable: false, configurable: true });
    }
}
function lazy(load, names) {
    const settle = () => {
        loadRooms();
        const m = load();
        for (const [name, from] of names) Object.defineProperty(exports, name, { enumerable: true, configurable: true, writable: true, value: m[from] });
        return m;
    };
    for (const [name, from] of names) Object.defineProperty(exports, name, { enumerable: true, configurable: true, get: () => settle()[from] });
}`;
}

/** Rewrites the compiled index; throws when a line is not in a form this tool knows. */
function lazyCore(js, rooms, members) {
  const lines = js.split('\n');
  const out = [];
  const modules = new Map(); // binding -> { from, names }
  const sideEffects = [];
  for (const line of lines) {
    const side = SIDE_EFFECT_LINE.exec(line);
    if (side) {
      if (!rooms.includes(side[1])) throw new Error(`lazy-core: the index loads ${side[1]} for its effect, and it is not a room`);
      sideEffects.push(side[1]);
      continue;
    }
    const mod = MODULE_LINE.exec(line);
    if (mod && !EAGER.includes(mod[2])) {
      modules.set(mod[1], { from: mod[2], names: [] });
      out.push(`/*${mod[1]}*/`);
      continue;
    }
    const exp = EXPORT_LINE.exec(line);
    if (exp && modules.has(exp[2])) {
      modules.get(exp[2]).names.push([exp[1], exp[3]]);
      continue;
    }
    if (/require\(/.test(line) && !mod) throw new Error(`lazy-core: a line of the index this tool does not know: ${line}`);
    out.push(line);
  }
  for (const e of EAGER) if (!js.includes(`require("${e}")`)) throw new Error(`lazy-core: the index no longer requires ${e}`);
  let text = out.join('\n');
  for (const [binding, { from, names }] of modules)
    text = text.replace(`/*${binding}*/`, () => `lazy(() => require(${JSON.stringify(from)}), ${JSON.stringify(names)});`);
  const head = /^(Object\.defineProperty\(exports, "__esModule", \{ value: true \}\);)$/m;
  if (!head.test(text)) throw new Error('lazy-core: the index has no __esModule line');
  return {
    js: text.replace(head, (line) => `${line}\n${helper(rooms, members)}`) + '\nstandInMembers();\n',
    modules: modules.size,
    sideEffects,
  };
}

module.exports = { lazyCore, roomModules, EAGER };

if (require.main === module) {
  const coreDir = path.join(__dirname, '..', 'dist', 'core');
  const file = path.join(coreDir, 'index.js');
  const js = fs.readFileSync(file, 'utf8');
  if (!js.includes('function loadRooms()')) {
    const rooms = roomModules(coreDir);
    const members = deviceMembers(coreDir, rooms);
    const r = lazyCore(js, rooms, members);
    fs.writeFileSync(file, r.js);
    console.error(
      `lazy core: ${r.modules} modules of the index and ${rooms.length} rooms load on first use; Device has ${members.length} stand-in members`,
    );
  }
}
