// Capability negotiation: a fixed rule over the driver's descriptor, whether
// the driver has a rich transport, and the approval policy. It picks the
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

/** Whether `transport` can carry `mechanism` for this descriptor and policy. */
function carries(descriptor, mechanism, transport, ask) {
  const streams = transport === 'batch' || descriptor.streaming;
  const hitl = !ask || hitlFor(descriptor, mechanism);
  return descriptor[mechanism] && descriptor.run && streams && hitl;
}

/**
 * Decide { mechanism, transport } for one run.
 * mechanism: 'native' | 'prompt' | null (no schema); transport: 'batch' | 'rich'.
 *
 * The consumer's Run or Stream is not an input: the driver's rich transport
 * is preferred, its batch transport negotiated when the rich one cannot carry
 * structured output. Under an explicit Ask the batch transport is no fallback
 * (a one-shot run cannot pause for a human). A descriptor no transport can
 * honour, self-contradictory or not, is structured_output_unsupported.
 */
export function negotiate(descriptor, { wantsSchema, rich, approval }) {
  const first = rich ? 'rich' : 'batch';
  if (!wantsSchema) return { mechanism: null, transport: first };
  const ask = approval === 'ask';
  const transports = rich && !ask ? ['rich', 'batch'] : [first];
  for (const transport of transports) {
    for (const mechanism of ['native', 'prompt']) {
      if (carries(descriptor, mechanism, transport, ask)) return { mechanism, transport };
    }
  }
  const why = ask
    ? 'no mechanism works with an Ask approval policy'
    : 'no transport of this driver can carry a declared mechanism';
  throw new Refused('structured_output_unsupported', `structured output unsupported: ${why}`);
}
