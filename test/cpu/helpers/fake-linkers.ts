// Fake libnvJitLink, libnvfatbin and libcuda (its cuLink* part), built by gcc at test time, for the
// call shapes and the Linker's logic on a machine without those libraries. Each records what it was
// given and writes it into its output, so a test reads back what reached C.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CUDA_VERSION } from '../../../src/driver/constants.gen';

const COMMON = `
  #include <stdlib.h>
  #include <string.h>
  #include <stdio.h>
  #include <stdint.h>
  static char *dupn(const void *p, size_t n) { char *s = malloc(n + 1); memcpy(s, p, n); s[n] = 0; return s; }
  static void append(char **s, const char *t) {
    size_t a = *s ? strlen(*s) : 0, b = strlen(t);
    *s = realloc(*s, a + b + 1); memcpy(*s + a, t, b + 1);
  }
  static int contains(const void *p, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) if (!memcmp((const char *)p + i, needle, k)) return 1;
    return 0;
  }
  static int live, created;
  /** Handles alive now, and made so far. */
  int fake_live(void) { return live; }
  int fake_created(void) { return created; }
`;

// nvJitLink: -arch is required; '-fictitious_option' and '-arch=sm_XX' are unrecognised; an input
// holding 'undefined_symbol' fails the link with an error log; LTO-IR without -lto fails too. The
// linked cubin is ELF magic then 'options|inputs'.
const NVJITLINK =
  COMMON +
  `
  typedef struct { char *opts; char *inputs; char *err; char *info; int lto, ptx, bad; } link_t;
  int __nvJitLinkCreate_13_0(link_t **h, uint32_t n, const char *const *o) {
    int arch = 0, lto = 0, ptx = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (!strcmp(o[i], "-fictitious_option") || !strcmp(o[i], "-arch=sm_XX")) return 1;
      if (!strncmp(o[i], "-arch=sm_", 9)) arch = 1;
      if (!strcmp(o[i], "-lto")) lto = 1;
      if (!strcmp(o[i], "-ptx")) ptx = 1;
    }
    if (!arch) return 2;
    link_t *l = calloc(1, sizeof *l);
    for (uint32_t i = 0; i < n; i++) { if (i) append(&l->opts, " "); append(&l->opts, o[i]); }
    if (!l->opts) append(&l->opts, "");
    append(&l->inputs, ""); append(&l->err, ""); append(&l->info, "");
    l->lto = lto; l->ptx = ptx;
    live++; created++; *h = l; return 0;
  }
  int __nvJitLinkDestroy_13_0(link_t **h) {
    if (!h || !*h) return 3;
    link_t *l = *h; free(l->opts); free(l->inputs); free(l->err); free(l->info); free(l);
    *h = 0; live--; return 0;
  }
  int __nvJitLinkAddData_13_0(link_t *l, int type, const void *data, size_t size, const char *name) {
    if (!l) return 3;
    if (!data) return 10;
    char buf[256];
    snprintf(buf, sizeof buf, "%s%d:%zu:%s", *l->inputs ? "," : "", type, size, name ? name : "(null)");
    append(&l->inputs, buf);
    if (contains(data, size, "undefined_symbol")) l->bad = 1;
    if (type == 3 && !l->lto) { append(&l->err, "ERROR: LTO-IR input needs -lto\\n"); return 18; }
    return 0;
  }
  int __nvJitLinkAddFile_13_0(link_t *l, int type, const char *file) { return l && file ? 0 : 3; }
  int __nvJitLinkComplete_13_0(link_t *l) {
    if (!l) return 3;
    if (l->bad) { append(&l->err, "error   : Undefined reference to 'undefined_symbol' in 'second'\\n"); return 9; }
    append(&l->info, "info    : linked with "); append(&l->info, l->opts); append(&l->info, "\\n");
    return 0;
  }
  static char *linked(link_t *l) {
    char *s = 0; append(&s, "\\x7f" "ELF"); append(&s, l->opts); append(&s, "|"); append(&s, l->inputs); return s;
  }
  int __nvJitLinkGetLinkedCubinSize_13_0(link_t *l, size_t *n) { if (!l || l->ptx) return 3; char *s = linked(l); *n = strlen(s); free(s); return 0; }
  int __nvJitLinkGetLinkedCubin_13_0(link_t *l, void *out) { if (!l || l->ptx) return 3; char *s = linked(l); memcpy(out, s, strlen(s)); free(s); return 0; }
  int __nvJitLinkGetLinkedPtxSize_13_0(link_t *l, size_t *n) { if (!l || !l->ptx) return 3; *n = strlen(".version 9.0\\n// ") + strlen(l->inputs) + 1; return 0; }
  int __nvJitLinkGetLinkedPtx_13_0(link_t *l, char *out) { if (!l || !l->ptx) return 3; strcpy(out, ".version 9.0\\n// "); strcat(out, l->inputs); return 0; }
  int __nvJitLinkGetErrorLogSize_13_0(link_t *l, size_t *n) { if (!l) return 3; *n = strlen(l->err) + 1; return 0; }
  int __nvJitLinkGetErrorLog_13_0(link_t *l, char *out) { if (!l) return 3; strcpy(out, l->err); return 0; }
  int __nvJitLinkGetInfoLogSize_13_0(link_t *l, size_t *n) { if (!l) return 3; *n = strlen(l->info) + 1; return 0; }
  int __nvJitLinkGetInfoLog_13_0(link_t *l, char *out) { if (!l) return 3; strcpy(out, l->info); return 0; }
  int nvJitLinkVersion(unsigned *major, unsigned *minor) { *major = 13; *minor = 0; return 0; }
`;

// nvFatbin: '--unsupported_option' is refused; the fatbin is the fatbin magic then each entry.
const NVFATBIN =
  COMMON +
  `
  typedef struct { char *entries; } fb_t;
  static const char *names[] = { "", "NVFATBIN_ERROR_INTERNAL", "NVFATBIN_ERROR_ELF_ARCH_MISMATCH" };
  const char *nvFatbinGetErrorString(int r) { return r >= 0 && r < 3 ? names[r] : "unknown"; }
  int nvFatbinCreate(fb_t **h, const char **o, size_t n) {
    for (size_t i = 0; i < n; i++) if (!strcmp(o[i], "--unsupported_option")) return 8;
    fb_t *f = calloc(1, sizeof *f); append(&f->entries, ""); live++; created++; *h = f; return 0;
  }
  int nvFatbinDestroy(fb_t **h) { if (!h || !*h) return 5; free((*h)->entries); free(*h); *h = 0; live--; return 0; }
  static int add(fb_t *f, const char *kind, const void *code, size_t size, const char *arch, const char *id) {
    if (!f || !code) return 5;
    /* A cubin whose bytes name another architecture, as nvFatbin checks the ELF's. */
    char want[16]; snprintf(want, sizeof want, "sm_%s", arch);
    if (!strcmp(kind, "cubin") && contains(code, size, "sm_") && !contains(code, size, want)) return 2;
    char buf[256]; snprintf(buf, sizeof buf, "%s%s:%s:%s:%zu", *f->entries ? "," : "", kind, arch, id, size);
    append(&f->entries, buf); return 0;
  }
  int nvFatbinAddPTX(fb_t *f, const char *c, size_t n, const char *a, const char *id, const char *opt) { return add(f, "ptx", c, n, a, id); }
  int nvFatbinAddCubin(fb_t *f, const void *c, size_t n, const char *a, const char *id) { return add(f, "cubin", c, n, a, id); }
  int nvFatbinAddLTOIR(fb_t *f, const void *c, size_t n, const char *a, const char *id, const char *opt) { return add(f, "ltoir", c, n, a, id); }
  int nvFatbinAddIndex(fb_t *f, const void *c, size_t n, const char *id) { return add(f, "index", c, n, "-", id); }
  int nvFatbinAddReloc(fb_t *f, const void *c, size_t n) { return add(f, "reloc", c, n, "-", "-"); }
  int nvFatbinSize(fb_t *f, size_t *n) { if (!f) return 5; *n = 4 + strlen(f->entries); return 0; }
  int nvFatbinGet(fb_t *f, void *out) { if (!f) return 5; memcpy(out, "\\x50\\xed\\x55\\xba", 4); memcpy((char *)out + 4, f->entries, strlen(f->entries)); return 0; }
  int nvFatbinVersion(unsigned *major, unsigned *minor) { *major = 13; *minor = 0; return 0; }
`;

// libcuda, the part the Linker's fallback uses: a current context, cuLink* that check PTX ends in
// its NUL, write their logs into the option buffers, and fail on 'undefined_symbol'.
const LIBCUDA =
  COMMON +
  `
  typedef struct { char *types; char *info; char *err; unsigned infoN, errN; int bad; void *cubin; char *opts; } ls_t;
  int cuDriverGetVersion(int *v) { *v = ${CUDA_VERSION}; return 0; }
  int cuInit(unsigned f) { return 0; }
  int cuCtxGetCurrent(void **c) { *c = (void *)0x1234; return 0; }
  int cuGetErrorName(int e, const char **s) { *s = e == 218 ? "CUDA_ERROR_INVALID_PTX" : e == 1 ? "CUDA_ERROR_INVALID_VALUE" : e == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_UNKNOWN"; return 0; }
  int cuGetErrorString(int e, const char **s) { *s = "fake"; return 0; }
  int cuLinkCreate_v2(unsigned n, int *o, void **v, ls_t **out) {
    ls_t *l = calloc(1, sizeof *l); append(&l->types, ""); append(&l->opts, "");
    for (unsigned i = 0; i < n; i++) {
      if (o[i] == 3) l->info = v[i];
      else if (o[i] == 4) l->infoN = (unsigned)(uintptr_t)v[i];
      else if (o[i] == 5) l->err = v[i];
      else if (o[i] == 6) l->errN = (unsigned)(uintptr_t)v[i];
      else { char b[64]; snprintf(b, sizeof b, "%s%d=%lu", *l->opts ? "," : "", o[i], (unsigned long)(uintptr_t)v[i]); append(&l->opts, b); }
    }
    live++; created++; *out = l; return 0;
  }
  int cuLinkAddData_v2(ls_t *l, int type, void *data, size_t size, const char *name, unsigned n, int *o, void **v) {
    if (type == 1 && (size == 0 || ((char *)data)[size - 1] != 0)) return 1;
    if (contains(data, size, "undefined_symbol")) l->bad = 1;
    char b[64]; snprintf(b, sizeof b, "%s%d:%s", *l->types ? "," : "", type, name); append(&l->types, b);
    return 0;
  }
  int cuLinkComplete(ls_t *l, void **cubin, size_t *size) {
    if (l->bad) { snprintf(l->err, l->errN, "ptxas fatal   : Unresolved extern function 'undefined_symbol'"); return 218; }
    snprintf(l->info, l->infoN, "info    : fake cuLink linked %s", l->types);
    char *s = 0; append(&s, "\\x7f" "ELF" "driver|"); append(&s, l->opts); append(&s, "|"); append(&s, l->types);
    l->cubin = s; *cubin = s; *size = strlen(s); return 0;
  }
  int cuLinkDestroy(ls_t *l) { free(l->types); free(l->opts); free(l->cubin); free(l); live--; return 0; }
`;

/** Builds the three fakes into `dir`; returns their paths. */
export function buildFakeLinkers(dir: string): { nvjitlink: string; nvfatbin: string; cuda: string } {
  const out = {
    nvjitlink: path.join(dir, 'libnvJitLink.so.13'),
    nvfatbin: path.join(dir, 'libnvfatbin.so.13'),
    cuda: path.join(dir, 'libcuda.so.1'),
  };
  for (const [file, src] of [
    [out.nvjitlink, NVJITLINK],
    [out.nvfatbin, NVFATBIN],
    [out.cuda, LIBCUDA],
  ]) {
    fs.writeFileSync(`${file}.c`, src);
    execFileSync('gcc', ['-shared', '-fPIC', '-O1', '-o', file, `${file}.c`]);
  }
  return out;
}

/**
 * Libraries that export every symbol of nvJitLink, nvFatbin and libNVVM and refuse every call with
 * status 99, touching no argument (their version calls answer, so the loader takes them): for the
 * argument fuzzer, where a real library would crash on the bad handles it is given.
 */
export function buildRefusingStubs(dir: string): Record<'nvjitlink' | 'nvfatbin' | 'nvvm', string> {
  const apis = {
    nvjitlink: { file: 'libnvJitLink.so.13', version: 'nvJitLinkVersion', major: 13 },
    nvfatbin: { file: 'libnvfatbin.so.13', version: 'nvFatbinVersion', major: 13 },
    nvvm: { file: 'libnvvm.so.4', version: 'nvvmVersion', major: 2 },
  };
  const out = {} as Record<keyof typeof apis, string>;
  for (const [id, a] of Object.entries(apis) as [keyof typeof apis, (typeof apis)[keyof typeof apis]][]) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const decls = require(`../../../src/ffi/${id}.gen`).declarations as Record<string, [string, string]>;
    const fns = Object.values(decls).map(([sym, ret]) => {
      if (sym === a.version) return `int ${sym}(int *major, int *minor) { *major = ${a.major}; *minor = 0; return 0; }`;
      if (ret === 'const char *') return `const char *${sym}() { return "stub"; }`;
      return `int ${sym}() { return 99; }`;
    });
    const file = path.join(dir, a.file);
    fs.writeFileSync(`${file}.c`, fns.join('\n') + '\n');
    execFileSync('gcc', ['-shared', '-fPIC', '-o', file, `${file}.c`]);
    out[id] = file;
  }
  return out;
}
