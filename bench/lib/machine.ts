import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import type { Contender } from '../contenders/types.js'

/** The machine a run was measured on. */
export interface Machine {
  cpu: string
  cores: number
  memoryGiB: number
  node: string
  platform: string
}

/** Reads the CPU model, core count, memory, Node version and OS. */
export function machine(): Machine {
  const cpus = os.cpus()
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: os.totalmem() / 2 ** 30,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  }
}

/** The installed version of npm package `pkg`, or "not installed". */
export function packageVersion(root: string, pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return 'not installed'
  }
}

function gitCommit(root: string): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return dirty.length > 0 ? `${sha} + uncommitted src/ changes` : sha
  } catch {
    return 'no commit yet'
  }
}

/** EchoStore's version and the commit measured (noting uncommitted src/ changes). */
export function subjectVersion(root: string): string {
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
  return `${own.version} (${gitCommit(root)})`
}

/**
 * The version each contender ran at: the installed package.json for peers, the repository's own
 * version and commit for EchoStore, "bench" for the floors.
 */
export function contenderVersion(root: string, contender: Contender): string {
  if (contender.kind === 'floor') return 'bench'
  if (contender.kind === 'subject') return subjectVersion(root)
  return contender.pkg !== undefined ? packageVersion(root, contender.pkg) : 'unknown'
}
