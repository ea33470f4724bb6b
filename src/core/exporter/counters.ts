// What the exporter serves: dcgm-exporter's default counters that NVML reads, under dcgm-exporter's
// names, types and help texts (its etc/default-counters.csv; test/cpu/fixtures/dcgm-exporter-counters.json
// lists them with the source and the NVML call behind each), the ECC counters of that file that it
// leaves commented out, and what dcgm-exporter lacks (processes, clock event reasons, NVML events, the
// exporter's own health) under names of this package.

/** A Prometheus metric type, as the `# TYPE` line says it. */
export type PromType = 'gauge' | 'counter';

/** One metric of dcgm-exporter: its name, Prometheus type and help text, as dcgm-exporter prints them. */
export interface DcgmCounter {
  /** The DCGM field name, which dcgm-exporter uses as the metric name, e.g. `DCGM_FI_DEV_GPU_TEMP`. */
  readonly name: string;
  /** `gauge` or `counter`, as dcgm-exporter's counters file gives it. */
  readonly type: PromType;
  /** The `# HELP` text, as dcgm-exporter's counters file gives it. */
  readonly help: string;
}

/** dcgm-exporter's default counters that NVML can read, in the order of its counters file. */
export const DCGM_DEFAULT_COUNTERS: readonly DcgmCounter[] = [
  { name: 'DCGM_FI_DEV_SM_CLOCK', type: 'gauge', help: 'SM clock frequency (in MHz).' },
  { name: 'DCGM_FI_DEV_MEM_CLOCK', type: 'gauge', help: 'Memory clock frequency (in MHz).' },
  { name: 'DCGM_FI_DEV_MEMORY_TEMP', type: 'gauge', help: 'Memory temperature (in C).' },
  { name: 'DCGM_FI_DEV_GPU_TEMP', type: 'gauge', help: 'GPU temperature (in C).' },
  { name: 'DCGM_FI_DEV_POWER_USAGE', type: 'gauge', help: 'Power draw (in W).' },
  { name: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', type: 'counter', help: 'Total energy consumption since boot (in mJ).' },
  { name: 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER', type: 'counter', help: 'Total number of PCIe retries.' },
  { name: 'DCGM_FI_DEV_GPU_UTIL', type: 'gauge', help: 'GPU utilization (in %).' },
  { name: 'DCGM_FI_DEV_MEM_COPY_UTIL', type: 'gauge', help: 'Memory utilization (in %).' },
  { name: 'DCGM_FI_DEV_ENC_UTIL', type: 'gauge', help: 'Encoder utilization (in %).' },
  { name: 'DCGM_FI_DEV_DEC_UTIL', type: 'gauge', help: 'Decoder utilization (in %).' },
  { name: 'DCGM_FI_DEV_XID_ERRORS', type: 'gauge', help: 'Value of the last XID error encountered.' },
  { name: 'DCGM_FI_DEV_FB_FREE', type: 'gauge', help: 'Framebuffer memory free (in MiB).' },
  { name: 'DCGM_FI_DEV_FB_USED', type: 'gauge', help: 'Framebuffer memory used (in MiB).' },
  { name: 'DCGM_FI_DEV_FB_RESERVED', type: 'gauge', help: 'Framebuffer memory reserved (in MiB).' },
  { name: 'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL', type: 'counter', help: 'Total number of NVLink bandwidth counters for all lanes.' },
  { name: 'DCGM_FI_DEV_VGPU_LICENSE_STATUS', type: 'gauge', help: 'vGPU License status' },
  { name: 'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS', type: 'counter', help: 'Number of remapped rows for uncorrectable errors' },
  { name: 'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', type: 'counter', help: 'Number of remapped rows for correctable errors' },
  { name: 'DCGM_FI_DEV_ROW_REMAP_FAILURE', type: 'gauge', help: 'Whether remapping of rows has failed' },
  { name: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', type: 'gauge', help: 'Ratio of time the graphics engine is active.' },
  { name: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', type: 'gauge', help: 'Ratio of cycles the tensor (HMMA) pipe is active.' },
  {
    name: 'DCGM_FI_PROF_DRAM_ACTIVE',
    type: 'gauge',
    help: 'Ratio of cycles the device memory interface is active sending or receiving data.',
  },
  {
    name: 'DCGM_FI_PROF_PCIE_TX_BYTES',
    type: 'gauge',
    help: 'The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.',
  },
  {
    name: 'DCGM_FI_PROF_PCIE_RX_BYTES',
    type: 'gauge',
    help: 'The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.',
  },
];

/** The ECC counters dcgm-exporter's counters file lists commented out: served too, under the same names. */
export const DCGM_ECC_COUNTERS: readonly DcgmCounter[] = [
  { name: 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL', type: 'counter', help: 'Total number of single-bit volatile ECC errors.' },
  { name: 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', type: 'counter', help: 'Total number of double-bit volatile ECC errors.' },
  { name: 'DCGM_FI_DEV_ECC_SBE_AGG_TOTAL', type: 'counter', help: 'Total number of single-bit persistent ECC errors.' },
  { name: 'DCGM_FI_DEV_ECC_DBE_AGG_TOTAL', type: 'counter', help: 'Total number of double-bit persistent ECC errors.' },
];

/** The label dcgm-exporter gives every GPU metric for the driver's version (a "label" row of its counters file). */
export const DRIVER_VERSION_LABEL = 'DCGM_FI_DRIVER_VERSION';

/**
 * The labels of every GPU metric, in dcgm-exporter's order: NVML's index, the UUID, the PCI bus id,
 * `nvidia<index>`, the product name, the host (left out with `hostname: null`) and the driver's version.
 * dcgm-exporter releases up to 4.5.3-4.8.2 name the host label `Hostname`; its main branch renamed it
 * `hostname` (the `hostnameLabel` option picks).
 */
export const GPU_LABELS = ['gpu', 'UUID', 'pci_bus_id', 'device', 'modelName'] as const;

/** The label XID metrics add: the XID's number. dcgm-exporter also adds `err_msg`, its own text for the XID; not served here. */
export const XID_LABEL = 'err_code';
