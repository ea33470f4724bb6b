// The C anchor of the LTO rows: what examples/ltoLink.ts does before launching, in C. NVRTC compiles
// bench/lto/math.cu and kernel.cu to LTO-IR (-dlto), nvJitLink links them with -lto -O3 into a cubin.
//   lto <math.cu> <kernel.cu> <arch digits>  ->  CSV lines c,<operation>,<ns>
// Built by bench/run.sh: nvcc -O2 -o lto bench/lto.cpp -lnvrtc -lnvJitLink
#include <nvrtc.h>
#include <nvJitLink.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
static double now_ns() { return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
template <class F> double median5(F f) {
  std::vector<double> r;
  for (int rep = 0; rep < 5; rep++) { double t = now_ns(); f(); r.push_back(now_ns() - t); }
  std::sort(r.begin(), r.end()); return r[2];
}
#define NVRTC(x) do { nvrtcResult e = (x); if (e != NVRTC_SUCCESS) { fprintf(stderr, "%s: %s\n", #x, nvrtcGetErrorString(e)); exit(1); } } while (0)
#define JIT(x) do { nvJitLinkResult e = (x); if (e != NVJITLINK_SUCCESS) { fprintf(stderr, "%s: %d\n", #x, (int)e); exit(1); } } while (0)
static std::string slurp(const char *f) { std::ifstream in(f); std::stringstream s; s << in.rdbuf(); return s.str(); }
static std::vector<char> ltoir(const std::string &src, const char *name, const std::string &arch) {
  nvrtcProgram p; NVRTC(nvrtcCreateProgram(&p, src.c_str(), name, 0, nullptr, nullptr));
  std::string a = "--gpu-architecture=compute_" + arch;
  const char *opts[] = {a.c_str(), "-dlto", "--relocatable-device-code=true"};
  NVRTC(nvrtcCompileProgram(p, 3, opts));
  size_t n; NVRTC(nvrtcGetLTOIRSize(p, &n)); std::vector<char> out(n); NVRTC(nvrtcGetLTOIR(p, out.data()));
  NVRTC(nvrtcDestroyProgram(&p)); return out;
}
static std::vector<char> link(const std::vector<char> &a, const std::vector<char> &b, const std::string &arch) {
  std::string o = "-arch=sm_" + arch;
  const char *opts[] = {o.c_str(), "-lto", "-O3"};
  nvJitLinkHandle h; JIT(nvJitLinkCreate(&h, 3, opts));
  JIT(nvJitLinkAddData(h, NVJITLINK_INPUT_LTOIR, a.data(), a.size(), "math.cu"));
  JIT(nvJitLinkAddData(h, NVJITLINK_INPUT_LTOIR, b.data(), b.size(), "kernel.cu"));
  JIT(nvJitLinkComplete(h));
  size_t n; JIT(nvJitLinkGetLinkedCubinSize(h, &n)); std::vector<char> out(n); JIT(nvJitLinkGetLinkedCubin(h, out.data()));
  JIT(nvJitLinkDestroy(&h)); return out;
}
int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: lto math.cu kernel.cu 90\n"); return 2; }
  std::string math = slurp(argv[1]), kernel = slurp(argv[2]), arch = argv[3];
  link(ltoir(math, "math.cu", arch), ltoir(kernel, "kernel.cu", arch), arch);  // warm the libraries once
  printf("c,lto_compile2+link_cold,%.1f\n", median5([&] { link(ltoir(math, "math.cu", arch), ltoir(kernel, "kernel.cu", arch), arch); }));
  auto a = ltoir(math, "math.cu", arch), b = ltoir(kernel, "kernel.cu", arch);
  printf("c,lto_link_only,%.1f\n", median5([&] { link(a, b, arch); }));
  return 0;
}
