/* Stand-in for <EGL/egl.h>: only the foreign types the CUDA interop header names, at their real sizes. */
#include <stdint.h>
typedef int32_t EGLint;
