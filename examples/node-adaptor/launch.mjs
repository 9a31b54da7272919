// Launching a provider CLI: its own process group, a deadline, always reaped.

import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** Process groups of children still running, so a stopping adaptor can kill them. */
const running = new Set();

function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    if (error.code !== 'ESRCH') throw error;
  }
}

/** Kill every provider still running (used when the adaptor itself is stopped). */
export function killAll() {
  for (const pid of running) killGroup(pid);
  running.clear();
}

/**
 * Run argv to completion or until `timeout` seconds have passed.
 * Resolves to { stdout, stderr, code, signal, signalNumber, timedOut } where
 * stdout and stderr are Buffers; rejects only when the process cannot start.
 */
export function launch(argv, { env, cwd, timeout }) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A new session and process group: the deadline kills grandchildren too.
      detached: true,
    });
    const stdout = [];
    const stderr = [];
    let timedOut = false;
    let timer = null;
    let settled = false;
    if (child.pid !== undefined) {
      running.add(child.pid);
      timer = setTimeout(() => {
        timedOut = true;
        killGroup(child.pid);
      }, Math.max(0, timeout * 1000));
    }
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    const finish = () => {
      clearTimeout(timer);
      running.delete(child.pid);
      settled = true;
    };
    child.on('error', (error) => {
      if (settled) return;
      finish();
      if (child.pid !== undefined) killGroup(child.pid);
      reject(new Error(`cannot run ${argv[0]}: ${error.message}`));
    });
    // 'close' comes after the exit and after both pipes reached EOF.
    child.on('close', (code, signal) => {
      if (settled) return;
      finish();
      resolve({
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr),
        code,
        signal,
        signalNumber: signal ? constants.signals[signal] ?? null : null,
        timedOut,
      });
    });
  });
}
