const path = require('path');
const core = require(path.resolve('dist/core'));
const { Kernel } = require(path.resolve('dist/core/launch/Kernel'));
const { cudart } = require(path.resolve('dist'));
const { i32, u32, f32, i64, f64 } = core;
const d = core.Device.get(0); const s = d.createStream(); const buf = d.allocate(1024);
const k = new Kernel(cudart.cudaKernel_t(3), 'e8', { isClosed: false });
const cfg = { grid: 1, block: 1, stream: s };
const pre = [i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)];
function t(name, f, n = 1e6) { let best = 1e9; for (let r = 0; r < 9; r++) { const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) f(); best = Math.min(best, Number(process.hrtime.bigint() - t0) / n); } console.log(name, best.toFixed(1)); }
t('make 6 args', new Function('i32,u32,f32,i64,f64', 'return () => [i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)]')(i32,u32,f32,i64,f64));
t('launch typed', new Function('k,cfg,buf,i32,u32,f32,i64,f64', 'return () => k.launch(cfg, buf, buf, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6))')(k,cfg,buf,i32,u32,f32,i64,f64));
t('launch pre', new Function('k,cfg,buf,p', 'return () => k.launch(cfg, buf, buf, p[0], p[1], p[2], p[3], p[4], p[5])')(k,cfg,buf,pre));
t('launch empty', new Function('k,cfg', 'return () => k.launch(cfg)')(k,cfg));
t('i64 only', new Function('i64', 'return () => i64(5)')(i64));
t('i32 only', new Function('i32', 'return () => i32(5)')(i32));
