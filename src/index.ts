// cuda-bindings: the CUDA APIs for Node.js, loaded at run time through koffi.
export * as cudart from './runtime';
export * as cuda from './driver';
export * as nvrtc from './nvrtc';
export * as core from './core';
