/* NVML from C, for the rows bench/nvml.ts times through the facade and core: one
 * nvmlDeviceGetUtilizationRates, and a health snapshot making the same calls as core's
 * NvmlDevice.health() (with and without the PCIe throughput, which NVML samples over ~20 ms).
 * Built against the committed declarations (tools/codegen/nvml-decls.h):
 *   gcc -O2 -I tools/codegen -o nvml bench/nvml.c -l:libnvidia-ml.so.1
 *   nvml  ->  CSV lines c,<operation>,<ns per call> */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "nvml-decls.h"

static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
/* The median of 5 timed loops of n calls, in ns per call (as the other anchors and our bench). */
#define BENCH(out, n, body) do { double r[5]; for (int rep = 0; rep < 5; rep++) { double t = now_ns(); for (int i = 0; i < (n); i++) { body; } r[rep] = (now_ns() - t) / (n); } qsort(r, 5, sizeof r[0], cmp); out = r[2]; } while (0)
#define CHECK(x) do { nvmlReturn_t e = (x); if (e != NVML_SUCCESS) { fprintf(stderr, "%s: %s\n", #x, nvmlErrorString(e)); exit(1); } } while (0)

static void snapshot(nvmlDevice_t d, int throughput) {
  unsigned int u, v, w;
  unsigned long long ull;
  nvmlUtilization_t util; nvmlDeviceGetUtilizationRates(d, &util);
  nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u);
  nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u);
  nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &u);
  nvmlDeviceGetPowerUsage(d, &u);
  nvmlDeviceGetEnforcedPowerLimit(d, &u);
  nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &u); nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &u);
  nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &u); nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &u);
  nvmlDeviceGetFanSpeed(d, &u);
  nvmlMemory_v2_t mem = { .version = nvmlMemory_v2 }; nvmlDeviceGetMemoryInfo_v2(d, &mem);
  nvmlDeviceGetCurrPcieLinkGeneration(d, &u); nvmlDeviceGetCurrPcieLinkWidth(d, &u);
  nvmlDeviceGetMaxPcieLinkGeneration(d, &u); nvmlDeviceGetMaxPcieLinkWidth(d, &u);
  if (throughput) { nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_TX_BYTES, &u); nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &u); }
  for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
    nvmlEnableState_t s;
    nvmlReturn_t e = nvmlDeviceGetNvLinkState(d, link, &s);
    if (e != NVML_SUCCESS) break;
    if (s == NVML_FEATURE_ENABLED) nvmlDeviceGetNvLinkVersion(d, link, &v);
  }
  if (nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &ull) == NVML_SUCCESS) {
    nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ull);
    nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &ull);
    nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &ull);
  }
  nvmlDeviceGetCurrentClocksEventReasons(d, &ull);
  nvmlComputeMode_t cm; nvmlDeviceGetComputeMode(d, &cm);
  nvmlDeviceGetMigMode(d, &v, &w);
  nvmlEnableState_t pm; nvmlDeviceGetPersistenceMode(d, &pm);
  nvmlPstates_t ps; nvmlDeviceGetPerformanceState(d, &ps);
  nvmlProcessInfo_t procs[16];
  char name[256];
  unsigned int n = 16;
  if (nvmlDeviceGetComputeRunningProcesses_v3(d, &n, procs) == NVML_SUCCESS)
    for (unsigned int i = 0; i < n; i++) nvmlSystemGetProcessName(procs[i].pid, name, sizeof name);
  n = 16;
  if (nvmlDeviceGetGraphicsRunningProcesses_v3(d, &n, procs) == NVML_SUCCESS)
    for (unsigned int i = 0; i < n; i++) nvmlSystemGetProcessName(procs[i].pid, name, sizeof name);
}

int main(void) {
  CHECK(nvmlInit_v2());
  nvmlDevice_t d;
  CHECK(nvmlDeviceGetHandleByIndex_v2(0, &d));
  nvmlUtilization_t u;
  double ns;
  BENCH(ns, 100000, nvmlDeviceGetUtilizationRates(d, &u));
  printf("c,nvmlDeviceGetUtilizationRates,%.1f\n", ns);
  BENCH(ns, 200, snapshot(d, 0));
  printf("c,nvml_health_snapshot_no_pcie_throughput,%.1f\n", ns);
  BENCH(ns, 5, snapshot(d, 1));
  printf("c,nvml_health_snapshot,%.1f\n", ns);
  CHECK(nvmlShutdown());
  return 0;
}
