/* Stand-in for <EGL/eglext.h>: opaque EGL handles. */
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;
