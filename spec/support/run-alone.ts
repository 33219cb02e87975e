import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Runs `spec/support/<name>` through tsx in a process of its own (nothing else keeps it alive); resolves its exit code and output. Never rejects. */
export function runAlone(name: string): Promise<{ code: number; stdout: string }> {
  const script = fileURLToPath(new URL(`./${name}`, import.meta.url))
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script], { cwd: root, timeout: 20_000 }, (error, stdout) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout })
    })
  })
}
