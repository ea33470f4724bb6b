// The files under a folder whose names end with `ext`, at any depth (the build steps in tools/ walk dist and src).
const fs = require('node:fs');
const path = require('node:path');

/** Every file below `dir` whose name ends with `ext`, as paths joined onto `dir`. */
function filesUnder(dir, ext) {
  const out = [];
  (function walk(d) {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(ext)) out.push(p);
    }
  })(dir);
  return out;
}

module.exports = { filesUnder };
