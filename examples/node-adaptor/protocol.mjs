// The harness's JSON-lines target protocol: one JSON object per line on
// stdin and stdout, start → run... → stop, one reply per request carrying its
// seq. Requests are served one at a time. Only replies go to stdout.

import { createInterface } from 'node:readline';

export const PROTOCOL_VERSION = 1;

function log(...parts) {
  process.stderr.write(`[node-example] ${parts.join(' ')}\n`);
}

/**
 * Serve protocol messages from `input` until stop or end of input.
 * `implementation` describes the adaptor; `runScenario(message)` resolves to
 * { outcome } or { skipped: reason } and may throw (reported as errored).
 * Resolves to the exit status.
 */
export async function serve({ input, output, implementation, runScenario }) {
  const reply = (message) => output.write(`${JSON.stringify(message)}\n`);
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let message;
    try {
      message = JSON.parse(line);
    } catch (error) {
      log(`ignoring a line that is not JSON: ${error.message}`);
      continue;
    }
    const seq = message?.seq;
    const command = message?.cmd;
    if (command === 'stop') {
      lines.close();
      return 0;
    }
    if (command === 'start') {
      if (message.version !== PROTOCOL_VERSION) {
        log(`harness speaks protocol version ${message.version}, this adaptor ${PROTOCOL_VERSION}`);
      }
      reply({ seq, ready: true, version: PROTOCOL_VERSION, implementation });
      continue;
    }
    if (command !== 'run') {
      reply({ seq, errored: true, message: `unknown command ${JSON.stringify(command)}` });
      continue;
    }
    try {
      const answer = await runScenario(message);
      if (answer.skipped !== undefined) reply({ seq, skipped: true, reason: answer.skipped });
      else reply({ seq, outcome: answer.outcome });
    } catch (error) {
      // Never crash on one scenario: report it and serve the next.
      log(`scenario ${message.scenario}: ${error?.stack ?? error}`);
      reply({ seq, errored: true, message: String(error?.message ?? error) });
    }
  }
  return 0;
}
