// `cuda-bindings topo`: how the GPUs connect, as `nvidia-smi topo -m` prints it, from NVML.
import { NvmlDevice, formatCpuList, type TopologyLink } from '../core/nvml/NvmlDevice';
import type { Options } from './args';
import { printable, type Output } from './common';

export interface TopoReport {
  gpus: {
    index: number;
    name: string;
    uuid: string;
    pciBusId: string;
    cpuAffinity: string | null;
    /** The NUMA nodes nearest the GPU (`0`, `0-1`), as nvidia-smi's `NUMA Affinity`. */
    numaAffinity: string | null;
    /** The GPU's own NUMA node (C2C systems), as nvidia-smi's `GPU NUMA ID`. */
    numaNode: number | null;
  }[];
  /** matrix[i][j]: how GPU i reaches GPU j. */
  matrix: TopologyLink[][];
}

/** Reads the topology of every GPU. */
export function topology(): TopoReport {
  const devs = NvmlDevice.all();
  return {
    gpus: devs.map((d) => {
      const cpus = d.cpuAffinity();
      const nodes = d.numaAffinity();
      return {
        index: d.index,
        name: d.name,
        uuid: d.uuid,
        pciBusId: d.pciBusId,
        cpuAffinity: cpus && formatCpuList(cpus),
        numaAffinity: nodes && formatCpuList(nodes),
        numaNode: d.numaNode(),
      };
    }),
    matrix: devs.map((a) => devs.map((b) => a.topology(b))),
  };
}

const LEGEND = `Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
  p2p  = peer-to-peer reads (r), writes (w), atomics (a) as NVML reports them`;

/** Runs `cuda-bindings topo`: the matrix and affinities, as text or --json. */
export function topo(o: Options, out: Output): void {
  const t = topology();
  if (o.json) {
    out.log(JSON.stringify(t, null, 2));
    return;
  }
  const head = ['', ...t.gpus.map((g) => `GPU${g.index}`), 'CPU Affinity', 'NUMA Affinity', 'GPU NUMA ID'];
  const rows = t.gpus.map((g, i) => [
    `GPU${g.index}`,
    ...t.matrix[i].map((l) => l.kind),
    g.cpuAffinity ?? 'N/A',
    g.numaAffinity ?? 'N/A',
    g.numaNode === null ? 'N/A' : String(g.numaNode),
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r: string[]) =>
    r
      .map((x, c) => x.padEnd(widths[c]))
      .join('  ')
      .trimEnd();
  out.log(line(head));
  for (const r of rows) out.log(line(r));
  if (t.gpus.length > 1) {
    out.log('');
    out.log('p2p');
    const p2p = (l: TopologyLink) =>
      l.kind === 'X' ? 'X' : `${l.p2p.read ? 'r' : '-'}${l.p2p.write ? 'w' : '-'}${l.p2p.atomics ? 'a' : '-'}`;
    const ph = ['', ...t.gpus.map((g) => `GPU${g.index}`)];
    const pr = t.gpus.map((g, i) => [`GPU${g.index}`, ...t.matrix[i].map(p2p)]);
    const pw = ph.map((h, c) => Math.max(h.length, ...pr.map((r) => r[c].length)));
    const pl = (r: string[]) =>
      r
        .map((x, c) => x.padEnd(pw[c]))
        .join('  ')
        .trimEnd();
    out.log(pl(ph));
    for (const r of pr) out.log(pl(r));
  }
  out.log('');
  for (const g of t.gpus) out.log(`GPU${g.index}: ${printable(g.name)} (${printable(g.pciBusId)}, ${printable(g.uuid)})`);
  out.log('');
  out.log(LEGEND);
}
