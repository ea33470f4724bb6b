// `cuda-bindings query --query-gpu=FIELDS --format=csv[,noheader][,nounits]`: nvidia-smi's selective
// query, from NVML alone. Field names (and their aliases), headers, units and value formats are
// nvidia-smi's, so a script written for `nvidia-smi --query-gpu` runs where only libnvidia-ml is.
import { NvmlDevice, type GpuDetails } from '../core/nvml/NvmlDevice';
import { UsageError, type Options } from './args';
import { printable, type Output } from './common';

/** What a value of a device reads as; `path` is where it lives in `info --json`'s `live` object. */
type Show = (v: never) => string;

/** One field of nvidia-smi's --query-gpu: its names (the first is the header), unit, where its value is, and how it prints. */
export interface QueryField {
  /** nvidia-smi's name and its aliases, e.g. `['name', 'gpu_name']`. */
  names: string[];
  /** The unit nvidia-smi writes after the value and in the header (`MiB`, `%`, `W`, `MHz`, `us`, `ms`). */
  unit?: string;
  /** The value's path in GpuDetails (and in `info --json`'s `live`), e.g. `memory.total`; null: not read by this package. */
  path: string | null;
  /** How a present value prints (the unit is added after it); default: as text. */
  show?: Show;
  /** What nvidia-smi prints instead of the value on this GPU, or undefined to print the value: e.g. `N/A` for every fabric field where the GPU has no fabric. */
  instead?: (row: Record<string, unknown>) => string | undefined;
}

const MiB = 2 ** 20;
const onOff = (v: boolean) => (v ? 'Enabled' : 'Disabled');
const yesNo = (v: boolean) => (v ? 'Yes' : 'No');
const hex = (digits: number) => (v: number) => `0x${v.toString(16).toUpperCase().padStart(digits, '0')}`;
const mib = (v: number) => String(Math.floor(v / MiB));
/** Memory the driver reserves, in MiB rounded up: nvidia-smi prints 616 MiB for 644,939,776 bytes (615.06 MiB). */
const mibUp = (v: number) => String(Math.ceil(v / MiB));
/** The driver's major version in a row (`580.95.05` gives 580), or 0 where it was not read. */
const driverMajor = (row: Record<string, unknown>) => parseInt(String(row.driverVersion ?? '0'), 10) || 0;
/** nvidia-smi from R580 on prints this for `display_mode` (its value moved to `display_attached`). */
const DISPLAY_MODE_DEPRECATED = '[Requested functionality has been deprecated]';
/** nvidia-smi prints `N/A` for every fabric field of a GPU whose fabric state is not supported (or not read). */
const noFabric = (row: Record<string, unknown>) => {
  const state = valueAt(row, 'fabric.state');
  return state === undefined || state === null || state === 'Not Supported' ? 'N/A' : undefined;
};
const watts = (v: number) => v.toFixed(2);
/** The bit of one clocks event reason in the active mask, as nvidia-smi prints it. */
const reason = (bit: number) => (mask: number) => ((mask & bit) !== 0 ? 'Active' : 'Not Active');

/** Rows of a group of fields that differ by one word: `[suffix, path suffix]` pairs under a prefix. */
function group(
  prefix: string,
  pathPrefix: string,
  pairs: [string, string][],
  extra: Omit<QueryField, 'names' | 'path'> = {},
): QueryField[] {
  return pairs.map(([name, p]) => ({ names: [`${prefix}.${name}`], path: `${pathPrefix}.${p}`, ...extra }));
}

const ECC_LOCATIONS: [string, string][] = [
  ['device_memory', 'deviceMemory'],
  ['dram', 'dram'],
  ['register_file', 'registerFile'],
  ['l1_cache', 'l1Cache'],
  ['l2_cache', 'l2Cache'],
  ['texture_memory', 'textureMemory'],
  ['cbu', 'cbu'],
  ['sram', 'sram'],
  ['total', 'total'],
];
const ecc = (kind: string, period: string) => group(`ecc.errors.${kind}.${period}`, `eccErrors.${kind}.${period}`, ECC_LOCATIONS);
const notRead = (...names: string[]): QueryField[] => names.map((n) => ({ names: [n], path: null }));
const REASON_BITS: [string, number][] = [
  ['gpu_idle', 0x1],
  ['applications_clocks_setting', 0x2],
  ['sw_power_cap', 0x4],
  ['hw_slowdown', 0x8],
  ['hw_thermal_slowdown', 0x40],
  ['hw_power_brake_slowdown', 0x80],
  ['sw_thermal_slowdown', 0x20],
  ['sync_boost', 0x10],
];

/** Every field of `nvidia-smi --query-gpu` (driver 580), in nvidia-smi's order. */
export const QUERY_FIELDS: QueryField[] = [
  { names: ['timestamp'], path: '$timestamp' },
  { names: ['driver_version'], path: 'driverVersion' },
  ...notRead('vgpu_driver_capability.heterogenous_multivGPU'),
  { names: ['count'], path: '$count' },
  { names: ['name', 'gpu_name'], path: 'name' },
  { names: ['serial', 'gpu_serial'], path: 'serial' },
  { names: ['uuid', 'gpu_uuid'], path: 'uuid' },
  { names: ['pci.bus_id', 'gpu_bus_id'], path: 'pciBusId' },
  { names: ['pci.domain'], path: 'pci.domain', show: hex(4) },
  { names: ['pci.bus'], path: 'pci.bus', show: hex(2) },
  { names: ['pci.device'], path: 'pci.device', show: hex(2) },
  { names: ['pci.baseClass'], path: 'pci.baseClass', show: hex(1) },
  { names: ['pci.subClass'], path: 'pci.subClass', show: hex(1) },
  { names: ['pci.device_id'], path: 'pci.deviceId', show: hex(8) },
  { names: ['pci.sub_device_id'], path: 'pci.subsystemId', show: hex(8) },
  ...notRead(
    'vgpu_device_capability.fractional_multiVgpu',
    'vgpu_device_capability.heterogeneous_timeSlice_profile',
    'vgpu_device_capability.heterogeneous_timeSlice_sizes',
    'vgpu_device_capability.homogeneous_placements',
    'vgpu_device_capability.mig_timeSlicing',
    'vgpu_device_capability.mig_timeSlicing_mode',
  ),
  { names: ['pcie.link.gen.current'], path: 'pcie.generation' },
  { names: ['pcie.link.gen.gpucurrent'], path: 'pcie.generation' },
  { names: ['pcie.link.gen.max'], path: 'pcie.maxGeneration' },
  { names: ['pcie.link.gen.gpumax'], path: 'pcieGpuMaxGeneration' },
  ...notRead('pcie.link.gen.hostmax'),
  { names: ['pcie.link.width.current'], path: 'pcie.width' },
  { names: ['pcie.link.width.max'], path: 'pcie.maxWidth' },
  { names: ['index'], path: 'index' },
  {
    names: ['display_mode'],
    path: 'display.mode',
    show: onOff,
    instead: (row) => (driverMajor(row) >= 580 ? DISPLAY_MODE_DEPRECATED : undefined),
  },
  // Whether a display is connected: NVML's display mode, which nvidia-smi from R580 prints here as Yes/No.
  { names: ['display_attached'], path: 'display.mode', show: yesNo },
  { names: ['display_active'], path: 'display.active', show: onOff },
  { names: ['persistence_mode'], path: 'persistenceMode', show: onOff },
  { names: ['addressing_mode'], path: 'addressingMode' },
  { names: ['accounting.mode'], path: 'accounting.mode', show: onOff },
  { names: ['accounting.buffer_size'], path: 'accounting.bufferSize' },
  { names: ['driver_model.current'], path: 'driverModel.current' },
  { names: ['driver_model.pending'], path: 'driverModel.pending' },
  { names: ['vbios_version'], path: 'vbiosVersion' },
  { names: ['inforom.img', 'inforom.image'], path: 'inforom.image' },
  { names: ['inforom.oem'], path: 'inforom.oem' },
  { names: ['inforom.ecc'], path: 'inforom.ecc' },
  { names: ['inforom.pwr', 'inforom.power'], path: 'inforom.power' },
  { names: ['inforom.checksum_validation'], path: 'inforom.checksumValid', show: (v: boolean) => (v ? 'valid' : 'invalid') },
  { names: ['gpu_recovery_action'], path: 'recoveryAction' },
  { names: ['gom.current', 'gpu_operation_mode.current'], path: 'operationMode.current' },
  { names: ['gom.pending', 'gpu_operation_mode.pending'], path: 'operationMode.pending' },
  { names: ['fan.speed'], unit: '%', path: 'fanSpeed' },
  { names: ['pstate'], path: 'performanceState' },
  { names: ['clocks_event_reasons.supported', 'clocks_throttle_reasons.supported'], path: 'clocksEventReasons.supported', show: hex(16) },
  { names: ['clocks_event_reasons.active', 'clocks_throttle_reasons.active'], path: 'clocksEventReasons.active', show: hex(16) },
  ...REASON_BITS.map(([name, bit]) => ({
    names: [`clocks_event_reasons.${name}`, `clocks_throttle_reasons.${name}`],
    path: 'clocksEventReasons.active',
    show: reason(bit),
  })),
  ...group(
    'clocks_event_reasons_counters',
    'clocksEventReasonCounters',
    [
      ['sw_power_cap', 'swPowerCap'],
      ['sync_boost', 'syncBoost'],
      ['sw_thermal_slowdown', 'swThermalSlowdown'],
      ['hw_thermal_slowdown', 'hwThermalSlowdown'],
      ['hw_power_brake_slowdown', 'hwPowerBrakeSlowdown'],
    ],
    { unit: 'us' },
  ),
  ...group(
    'memory',
    'memory',
    [
      ['total', 'total'],
      ['used', 'used'],
      ['free', 'free'],
    ],
    { unit: 'MiB', show: mib },
  ),
  { names: ['memory.reserved'], path: 'memory.reserved', unit: 'MiB', show: mibUp },
  { names: ['compute_mode'], path: 'computeMode' },
  { names: ['compute_cap'], path: 'computeCapability' },
  { names: ['utilization.gpu'], unit: '%', path: 'utilization.gpu' },
  { names: ['utilization.memory'], unit: '%', path: 'utilization.memory' },
  ...group(
    'utilization',
    'engineUtilization',
    [
      ['encoder', 'encoder'],
      ['decoder', 'decoder'],
      ['jpeg', 'jpeg'],
      ['ofa', 'ofa'],
    ],
    { unit: '%' },
  ),
  ...group('encoder.stats', 'encoderStats', [
    ['sessionCount', 'sessionCount'],
    ['averageFps', 'averageFps'],
    ['averageLatency', 'averageLatency'],
  ]),
  ...group(
    'dramEncryption.mode',
    'dramEncryption',
    [
      ['current', 'current'],
      ['pending', 'pending'],
    ],
    { show: onOff },
  ),
  ...group(
    'ecc.mode',
    'eccMode',
    [
      ['current', 'current'],
      ['pending', 'pending'],
    ],
    { show: onOff },
  ),
  ...ecc('corrected', 'volatile'),
  ...ecc('corrected', 'aggregate'),
  ...ecc('uncorrected', 'volatile'),
  ...ecc('uncorrected', 'aggregate'),
  { names: ['ecc.errors.uncorrected.volatile.sram.parity'], path: 'sramEcc.volatileParity' },
  { names: ['ecc.errors.uncorrected.volatile.sram.secded'], path: 'sramEcc.volatileSecDed' },
  { names: ['ecc.errors.uncorrected.aggregate.sram.parity'], path: 'sramEcc.aggregateParity' },
  { names: ['ecc.errors.uncorrected.aggregate.sram.secded'], path: 'sramEcc.aggregateSecDed' },
  { names: ['ecc.errors.uncorrected.aggregate.sram.thresholdExceeded'], path: 'sramEcc.thresholdExceeded', show: yesNo },
  ...group('ecc.errors.uncorrected.aggregate.sram', 'sramEcc', [
    ['l2', 'l2'],
    ['sm', 'sm'],
    ['mcu', 'mcu'],
    ['pcie', 'pcie'],
    ['other', 'other'],
  ]),
  { names: ['retired_pages.single_bit_ecc.count', 'retired_pages.sbe'], path: 'retiredPages.singleBitEcc' },
  { names: ['retired_pages.double_bit.count', 'retired_pages.dbe'], path: 'retiredPages.doubleBitEcc' },
  { names: ['retired_pages.pending'], path: 'retiredPages.pending', show: yesNo },
  { names: ['remapped_rows.correctable', 'remapped_rows.sbe'], path: 'remappedRows.correctable' },
  ...notRead('remapped_rows.correctable_inactive'),
  { names: ['remapped_rows.uncorrectable', 'remapped_rows.dbe'], path: 'remappedRows.uncorrectable' },
  ...notRead('remapped_rows.uncorrectable_inactive'),
  { names: ['remapped_rows.pending'], path: 'remappedRows.pending', show: yesNo },
  { names: ['remapped_rows.failure'], path: 'remappedRows.failure', show: yesNo },
  ...group('remapped_rows.histogram', 'remappedRowsHistogram', [
    ['max', 'max'],
    ['high', 'high'],
    ['partial', 'partial'],
    ['low', 'low'],
    ['none', 'none'],
  ]),
  { names: ['temperature.gpu'], path: 'temperature.current' },
  { names: ['temperature.gpu.tlimit'], path: 'temperatureExtra.tlimit' },
  { names: ['temperature.memory'], path: 'temperatureExtra.memory' },
  { names: ['power.management'], path: 'powerExtra.management', show: onOff },
  { names: ['power.draw'], unit: 'W', path: 'power.draw', show: watts },
  { names: ['power.draw.average', 'gpu.power.draw.average'], unit: 'W', path: 'powerExtra.average', show: watts },
  { names: ['power.draw.instant', 'gpu.power.draw.instant'], unit: 'W', path: 'powerExtra.instant', show: watts },
  { names: ['power.limit', 'gpu.power.requested_limit'], unit: 'W', path: 'powerExtra.requestedLimit', show: watts },
  { names: ['enforced.power.limit', 'gpu.power.current_limit'], unit: 'W', path: 'power.limit', show: watts },
  { names: ['power.default_limit', 'gpu.power.default_limit'], unit: 'W', path: 'powerExtra.defaultLimit', show: watts },
  { names: ['power.min_limit', 'gpu.power.min_limit'], unit: 'W', path: 'powerExtra.minLimit', show: watts },
  { names: ['power.max_limit', 'gpu.power.max_limit'], unit: 'W', path: 'powerExtra.maxLimit', show: watts },
  // Grace Hopper modules only: NVML's module-scope power readings are not read here.
  { names: ['module.power.draw.average'], unit: 'W', path: null },
  { names: ['module.power.draw.instant'], unit: 'W', path: null },
  { names: ['module.power.limit', 'module.power.requested_limit'], unit: 'W', path: null },
  { names: ['module.enforced.power.limit', 'module.power.current_limit'], unit: 'W', path: null },
  { names: ['module.power.default_limit'], unit: 'W', path: null },
  { names: ['module.power.min_limit'], unit: 'W', path: null },
  { names: ['module.power.max_limit'], unit: 'W', path: null },
  ...notRead('power_smoothing.delayed_power_smoothing_supported'),
  ...['primary_power_floor', 'secondary_power_floor', 'min_primary_floor_activation_offset', 'min_primary_floor_activation_point'].map(
    (name): QueryField => ({ names: [`power_smoothing.${name}`], unit: 'W', path: null }),
  ),
  { names: ['power_smoothing.window_multiplier'], unit: 'ms', path: null },
  ...['curr_profile', 'admin_override'].flatMap((p): QueryField[] => [
    { names: [`power_smoothing.${p}.secondary_power_floor`], unit: 'W', path: null },
    { names: [`power_smoothing.${p}.primary_floor_act_window_multiplier`], path: null },
    { names: [`power_smoothing.${p}.primary_floor_tar_window_multiplier`], path: null },
    { names: [`power_smoothing.${p}.primary_floor_act_offset`], unit: 'W', path: null },
  ]),
  { names: ['clocks.current.graphics', 'clocks.gr'], unit: 'MHz', path: 'clocksExtra.graphics' },
  { names: ['clocks.current.sm', 'clocks.sm'], unit: 'MHz', path: 'clocks.sm' },
  { names: ['clocks.current.memory', 'clocks.mem'], unit: 'MHz', path: 'clocks.memory' },
  { names: ['clocks.current.video', 'clocks.video'], unit: 'MHz', path: 'clocksExtra.video' },
  { names: ['clocks.applications.graphics', 'clocks.applications.gr'], unit: 'MHz', path: 'clocksExtra.applications.graphics' },
  { names: ['clocks.applications.memory', 'clocks.applications.mem'], unit: 'MHz', path: 'clocksExtra.applications.memory' },
  {
    names: ['clocks.default_applications.graphics', 'clocks.default_applications.gr'],
    unit: 'MHz',
    path: 'clocksExtra.defaultApplications.graphics',
  },
  {
    names: ['clocks.default_applications.memory', 'clocks.default_applications.mem'],
    unit: 'MHz',
    path: 'clocksExtra.defaultApplications.memory',
  },
  { names: ['clocks.max.graphics', 'clocks.max.gr'], unit: 'MHz', path: 'clocksExtra.graphicsMax' },
  { names: ['clocks.max.sm'], unit: 'MHz', path: 'clocks.smMax' },
  { names: ['clocks.max.memory', 'clocks.max.mem'], unit: 'MHz', path: 'clocks.memoryMax' },
  { names: ['mig.mode.current'], path: 'migMode.current', show: onOff },
  { names: ['mig.mode.pending'], path: 'migMode.pending', show: onOff },
  { names: ['gsp.mode.current'], path: 'gspMode.current', show: onOff },
  { names: ['gsp.mode.default'], path: 'gspMode.default', show: onOff },
  { names: ['c2c.mode'], path: 'c2cMode', show: onOff },
  ...group(
    'protected_memory',
    'protectedMemory',
    [
      ['total', 'total'],
      ['used', 'used'],
      ['free', 'free'],
    ],
    { unit: 'MiB', show: mib },
  ),
  ...group(
    'fabric',
    'fabric',
    [
      ['state', 'state'],
      ['status', 'status'],
      ['cliqueId', 'cliqueId'],
      ['clusterUuid', 'clusterUuid'],
    ],
    { instead: noFabric },
  ),
  ...group(
    'fabric.health',
    'fabric.health',
    [
      ['summary', 'summary'],
      ['bandwidth', 'bandwidth'],
      ['route_recovery_in_progress', 'routeRecovery'],
      ['route_unhealthy', 'routeUnhealthy'],
      ['access_timeout_recovery', 'accessTimeoutRecovery'],
      ['incorrect_configuration', 'incorrectConfiguration'],
    ],
    { instead: noFabric },
  ),
  // Not in NVML's public header (R580): printed only where the GPU has no fabric, as nvidia-smi does.
  { names: ['fabric.health.partition_assigned'], path: null, instead: noFabric },
  ...group('platform', 'platform', [
    ['chassis_serial_number', 'chassisSerialNumber'],
    ['slot_number', 'slotNumber'],
    ['tray_index', 'trayIndex'],
    ['host_id', 'hostId'],
    ['peer_type', 'peerType'],
    ['module_id', 'moduleId'],
    ['gpu_fabric_guid', 'gpuFabricGuid'],
  ]),
  { names: ['hostname'], path: 'hostname' },
];

const byName = new Map(QUERY_FIELDS.flatMap((f) => f.names.map((n) => [n.toLowerCase(), f] as const)));

/** The field nvidia-smi knows by `name` (or one of its aliases; case does not matter), or undefined. */
export function queryField(name: string): QueryField | undefined {
  return byName.get(name.trim().toLowerCase());
}

/** The value at a dotted `path` of an object, or undefined where a step is missing (null stays null). */
export function valueAt(o: unknown, path: string): unknown {
  let v: unknown = o;
  for (const k of path.split('.')) {
    if (v === null || v === undefined) return v;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** `2026/09/01 20:41:56.941`: nvidia-smi's timestamp, in local time. */
export function smiTimestamp(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** What a GPU's row reads from: its details, the GPU count and the time of the query. */
export type QueryRow = GpuDetails & { $count: number; $timestamp: string };

/** One cell as nvidia-smi prints it: the value with its unit, `[N/A]`, or NVML's reason in brackets. */
export function formatCell(f: QueryField, row: Record<string, unknown> & { errors?: Record<string, string> }, units = true): string {
  const instead = f.instead?.(row);
  if (instead !== undefined) return instead;
  const v = f.path === null ? null : valueAt(row, f.path);
  if (v === null || v === undefined) {
    // The reason recorded for this value or the call that read its group: `display.mode`, then `display`.
    const parts = f.path?.split('.') ?? [];
    for (let i = parts.length; i > 0; i--) {
      const why = row.errors?.[parts.slice(0, i).join('.')];
      if (why) return `[${why}]`;
    }
    return '[N/A]';
  }
  // Text from the GPU (a name, a serial, a hostname) reaches a terminal with its control characters escaped.
  const text = printable(f.show ? (f.show as (x: unknown) => string)(v) : String(v));
  return units && f.unit ? `${text} ${f.unit}` : text;
}

/** The header of a field as nvidia-smi prints it: its first name, and its unit in brackets. */
export function headerOf(f: QueryField): string {
  return f.unit ? `${f.names[0]} [${f.unit}]` : f.names[0];
}

/** Parses `--format=csv[,noheader][,nounits]`; throws UsageError naming what was wrong. */
export function parseFormat(text: string | undefined): { header: boolean; units: boolean } {
  if (text === undefined) throw new UsageError("--format is required: '--format=csv' (with ',noheader' and ',nounits' if wanted)", 'query');
  const words = text.split(',').map((w) => w.trim().toLowerCase());
  const bad = words.find((w) => !['csv', 'noheader', 'nounits'].includes(w));
  if (bad !== undefined) throw new UsageError(`--format: unknown option '${bad}' (csv, noheader, nounits)`, 'query');
  if (!words.includes('csv')) throw new UsageError("--format must include 'csv'", 'query');
  return { header: !words.includes('noheader'), units: !words.includes('nounits') };
}

/** Parses `--query-gpu=a,b,c` into the fields; throws UsageError naming a field nvidia-smi does not have. */
export function parseFields(text: string | undefined): QueryField[] {
  if (!text) throw new UsageError('--query-gpu needs a comma-separated list of fields (see nvidia-smi --help-query-gpu)', 'query');
  return text.split(',').map((name) => {
    const f = queryField(name);
    if (!f) throw new UsageError(`--query-gpu: field '${name.trim()}' is not a valid field to query`, 'query');
    return f;
  });
}

/** The CSV lines for `fields` over these rows (each a GPU's details with the count and time). */
export function queryLines(fields: QueryField[], rows: QueryRow[], format: { header: boolean; units: boolean }): string[] {
  const lines = format.header ? [fields.map(headerOf).join(', ')] : [];
  for (const r of rows) lines.push(fields.map((f) => formatCell(f, r as unknown as Record<string, unknown>, format.units)).join(', '));
  return lines;
}

/** Runs `cuda-bindings query --query-gpu=FIELDS --format=csv[,noheader][,nounits]` over every GPU (or --device N, NVML's index). */
export function query(o: Options, out: Output): void {
  const fields = parseFields(o.queryGpu);
  const format = parseFormat(o.format);
  const devices = o.device === undefined ? NvmlDevice.all() : [NvmlDevice.get(o.device)];
  const count = NvmlDevice.count();
  const timestamp = smiTimestamp(new Date());
  const rows = devices.map((d) => ({ ...d.details(), $count: count, $timestamp: timestamp }));
  for (const l of queryLines(fields, rows, format)) out.log(l);
}
