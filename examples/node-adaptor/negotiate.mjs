// Capability negotiation: a fixed rule over the driver's descriptor, the
// consumer's call (run or stream) and the approval policy. It picks the
// mechanism (native first, then prompt validation) and the transport, or
// refuses before anything is launched.

/** What each built-in driver declares for structured output. */
export const BUILTIN = Object.freeze({
  codex: { native: true, prompt: true, run: true, streaming: false },
  claude: { native: true, prompt: true, run: true, streaming: true },
  cursor: { native: false, prompt: true, run: true, streaming: true },
  codebuddy: { native: true, prompt: true, run: true, streaming: false },
});

export class Refused extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/** A descriptor with every field present (a request may send a partial one). */
export function descriptorFor(request) {
  const given = request.descriptor ?? BUILTIN[request.driver];
  if (!given) throw new Error(`no descriptor for driver ${JSON.stringify(request.driver)}`);
  const flag = (value, fallback) => (typeof value === 'boolean' ? value : fallback);
  const optional = (value) => (typeof value === 'boolean' ? value : null);
  return {
    native: flag(given.native, false),
    prompt: flag(given.prompt, false),
    run: flag(given.run, true),
    streaming: flag(given.streaming, false),
    hitl: flag(given.hitl, false),
    native_hitl: optional(given.native_hitl),
    prompt_hitl: optional(given.prompt_hitl),
  };
}

function hitlFor(descriptor, mechanism) {
  const specific = mechanism === 'native' ? descriptor.native_hitl : descriptor.prompt_hitl;
  return specific === null ? descriptor.hitl : specific;
}

/** A descriptor that contradicts itself is a configuration error. */
function checkConsistent(descriptor) {
  const hasMechanism = descriptor.native || descriptor.prompt;
  const hasFlags = descriptor.run || descriptor.streaming || descriptor.hitl;
  if (hasFlags && !hasMechanism) {
    throw new Refused(
      'invalid_driver_config',
      'descriptor sets a WorksWith flag but declares no structured-output mechanism',
    );
  }
  if (hasMechanism && !descriptor.run) {
    throw new Refused(
      'invalid_driver_config',
      'descriptor declares a mechanism without WorksWithRun',
    );
  }
}

/**
 * Decide { mechanism, transport } for one run.
 * mechanism: 'native' | 'prompt' | null (no schema); transport: 'batch' | 'rich'.
 */
export function negotiate(descriptor, { wantsSchema, mode, approval }) {
  const stream = mode === 'stream';
  if (!wantsSchema) return { mechanism: null, transport: stream ? 'rich' : 'batch' };
  checkConsistent(descriptor);
  const ask = approval === 'ask';
  for (const mechanism of ['native', 'prompt']) {
    if (!descriptor[mechanism]) continue;
    if (ask && !hitlFor(descriptor, mechanism)) continue;
    // The rich transport only when it can carry structured output.
    return { mechanism, transport: stream && descriptor.streaming ? 'rich' : 'batch' };
  }
  const why = ask
    ? 'no mechanism works with an Ask approval policy'
    : 'no mechanism declared';
  throw new Refused('structured_output_unsupported', `structured output unsupported: ${why}`);
}
