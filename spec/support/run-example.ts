import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** How an example run ended. */
export interface ExampleRun {
  code: number
  stdout: string
  stderr: string
}

/** Runs `examples/<path>` through tsx as a child process, with `env` added to this process's. Never rejects. */
export function runExample(path: string, env: Record<string, string> = {}, args: string[] = [], timeout = 45_000): Promise<ExampleRun> {
  const script = fileURLToPath(new URL(`../../examples/${path}`, import.meta.url))
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, env: { ...process.env, ...env }, timeout }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

/** The JSON an example printed on its `RESULT ` line. */
export function parseResult<T>(stdout: string): T {
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '))
  if (line === undefined) throw new Error(`the example printed no RESULT line:\n${stdout}`)
  return JSON.parse(line.slice('RESULT '.length)) as T
}
