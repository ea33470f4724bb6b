// The ESLint configuration catches what it is there for: an import cycle (import/no-cycle).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');

test('npm run lint reports a value import cycle between two modules', () => {
  const dir = fs.mkdtempSync(path.join(__dirname, 'lint-cycle-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = (): number => b() + 1;\n");
    fs.writeFileSync(path.join(dir, 'b.ts'), "import { a } from './a';\nexport const b = (): number => a();\n");
    const eslint = path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js');
    const r = spawnSync(process.execPath, [eslint, '--format', 'json', path.join(dir, 'a.ts')], { cwd: root, encoding: 'utf8' });
    const [result] = JSON.parse(r.stdout) as { messages: { ruleId: string | null }[] }[];
    expect({ status: r.status, rules: result.messages.map((m) => m.ruleId) }).toEqual({ status: 1, rules: ['import/no-cycle'] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

test("every 'files' glob of eslint.config.mjs matches a file of the repository", () => {
  // The config is an ES module: a child Node prints the globs of its own entries (the shared
  // configs it spreads in, which carry a name, cover file kinds this repository may not have).
  const print = "import c from './eslint.config.mjs'; console.log(JSON.stringify(c.flatMap((o) => (o.name ? [] : (o.files ?? [])))));";
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', print], { cwd: root, encoding: 'utf8' });
  const globs = (JSON.parse(r.stdout) as unknown[]).filter((g): g is string => typeof g === 'string');
  const files = spawnSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  expect(globs.length).toBeGreaterThan(3);
  expect(globs.filter((g) => !files.some((f) => globRegExp(g).test(f)))).toEqual([]);
}, 60_000);

/** ESLint's glob forms used in the config (`**`, `*`, `{a,b}`) as a regular expression over a repository path. */
function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (glob.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (glob.startsWith('**', i)) {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '{') re += '(?:';
    else if (c === '}') re += ')';
    else if (c === ',') re += '|';
    else re += c.replace(/[.+?^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
