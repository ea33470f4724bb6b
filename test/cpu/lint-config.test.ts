// The ESLint configuration catches what it is there for: an import cycle (import/no-cycle).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');

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
