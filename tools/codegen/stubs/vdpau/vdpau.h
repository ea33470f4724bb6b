/* Stand-in for <vdpau/vdpau.h>: only the foreign types the CUDA interop header names, at their real sizes. */
#include <stdint.h>
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef int VdpGetProcAddress(uint32_t device, uint32_t function_id, void **function_pointer);
