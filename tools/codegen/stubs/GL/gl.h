/* Stand-in for <GL/gl.h>: only the foreign types the CUDA interop header names, at their real sizes. */
typedef unsigned int GLenum;
typedef unsigned int GLuint;
