/**
 * Rendering of `k1412/event` notifications (docs/events.md) as one readable line each.
 * Pure: no `vscode` import.
 */

/** One run event, exactly as the server publishes it. */
export interface K1412Event {
  run_id: string;
  seq: number;
  ts: string;
  type: string;
  user: string;
  conversation: string | null;
  depth: number;
  agent_id: string | null;
  meta: Record<string, string>;
  payload: Record<string, unknown>;
}

/** What evidence a run needs, has, and still lacks (docs/evidence.md). */
export interface EvidenceState {
  required: string[];
  satisfied: string[];
  missing: string[];
}

/** True when `value` has the shape of an event (the fields the client relies on). */
export function isK1412Event(value: unknown): value is K1412Event {
  const v = value as Partial<K1412Event> | null;
  return typeof v === 'object' && v !== null && typeof v.run_id === 'string' && typeof v.seq === 'number'
    && typeof v.type === 'string' && typeof v.payload === 'object' && v.payload !== null;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/** The evidence state carried by a payload or result, either nested under `evidence` or at top level. */
export function evidenceOf(source: unknown): EvidenceState | undefined {
  if (typeof source !== 'object' || source === null) {
    return undefined;
  }
  const record = source as Record<string, unknown>;
  // Run ends carry `evidence`, model requests `verification`, completion events the lists themselves.
  const nested = [record.evidence, record.verification].find((value) => typeof value === 'object' && value !== null);
  const holder = (nested ?? record) as Record<string, unknown>;
  const required = stringList(holder.required);
  const satisfied = stringList(holder.satisfied);
  const missing = stringList(holder.missing);
  if (required === undefined && satisfied === undefined && missing === undefined) {
    return undefined;
  }
  return { required: required ?? [], satisfied: satisfied ?? [], missing: missing ?? [] };
}

/** The verification state in a few words, e.g. "evidence 1/2, missing: execution". */
export function evidenceText(evidence: EvidenceState): string {
  if (evidence.required.length === 0) {
    return 'no evidence required';
  }
  const done = evidence.required.filter((kind) => evidence.satisfied.includes(kind)).length;
  const base = `evidence ${done}/${evidence.required.length}`;
  return evidence.missing.length > 0 ? `${base}, missing: ${evidence.missing.join(', ')}` : `${base} ✓`;
}

/** Shorten text to `max` characters on one line. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function short(value: unknown, max: number): string {
  if (typeof value === 'string') {
    return JSON.stringify(clip(value, max));
  }
  const json = JSON.stringify(value);
  return clip(json === undefined ? String(value) : json, max);
}

/** `key=value` pairs of a tool call's public arguments. */
export function argumentSummary(args: unknown, maxValue = 60): string {
  if (typeof args !== 'object' || args === null) {
    return args === undefined ? '' : short(args, maxValue);
  }
  return Object.entries(args as Record<string, unknown>)
    .map(([key, value]) => `${key}=${short(value, maxValue)}`)
    .join(' ');
}

const HINT_KEYS = ['path', 'command', 'query', 'process_id', 'role', 'memory_id'];

/** The one argument that says what a finished tool call was about (its path, command, …). */
export function argumentHint(args: unknown): string {
  if (typeof args !== 'object' || args === null) {
    return '';
  }
  const record = args as Record<string, unknown>;
  const key = HINT_KEYS.find((name) => typeof record[name] === 'string' && record[name] !== '');
  return key === undefined ? '' : clip(record[key] as string, 60);
}

function text(payload: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = payload[key];
    if (typeof value === 'string' && value !== '') {
      return value;
    }
    if (typeof value === 'number') {
      return String(value);
    }
  }
  return undefined;
}

function toolName(payload: Record<string, unknown>): string {
  return text(payload, 'tool', 'name') ?? 'tool';
}

function withEvidence(detail: string, payload: Record<string, unknown>): string {
  const evidence = evidenceOf(payload);
  if (evidence === undefined) {
    return detail;
  }
  return detail === '' ? evidenceText(evidence) : `${detail} · ${evidenceText(evidence)}`;
}

/** The type-specific part of an event line. */
export function eventDetail(event: K1412Event): string {
  const p = event.payload;
  switch (event.type) {
    case 'run.created': {
      const task = text(p, 'task');
      const model = text(p, 'model');
      return [task !== undefined ? `task ${short(task, 120)}` : '', model !== undefined ? `model ${model}` : '']
        .filter((part) => part !== '').join(' · ');
    }
    case 'context.built': {
      const parts: string[] = [];
      if (typeof p.messages === 'number') {
        parts.push(`${p.messages} messages`);
      }
      if (typeof p.dropped === 'number' && p.dropped > 0) {
        parts.push(`${p.dropped} older dropped`);
      }
      if (Array.isArray(p.tools)) {
        parts.push(`${p.tools.length} tools`);
      }
      return withEvidence(parts.join(', '), p);
    }
    case 'tool.started':
      return `${toolName(p)} ${argumentSummary(p.arguments ?? p.args)}`.trim();
    case 'tool.completed': {
      const ok = p.ok === false ? 'failed' : 'ok';
      const error = text(p, 'error');
      const facts = (typeof p.facts === 'object' && p.facts !== null ? p.facts : {}) as Record<string, unknown>;
      const exit = typeof facts.exit_code === 'number' ? ` exit ${facts.exit_code}` : '';
      const ms = typeof p.run_ms === 'number' ? p.run_ms : p.duration_ms;
      const duration = typeof ms === 'number' ? ` (${ms} ms)` : '';
      const hint = argumentHint(p.arguments ?? p.args);
      const head = `${toolName(p)}${hint !== '' ? ` ${hint}` : ''} ${ok}${exit}${duration}`;
      return withEvidence(`${head}${error !== undefined ? `: ${clip(error, 160)}` : ''}`, p);
    }
    case 'model.requested':
    case 'model.responded': {
      const parts: string[] = [];
      const iteration = text(p, 'iteration');
      if (iteration !== undefined) {
        parts.push(`iteration ${iteration}`);
      }
      const model = text(p, 'model');
      if (model !== undefined) {
        parts.push(model);
      }
      if (p.ok === false) {
        parts.push(`error: ${clip(text(p, 'error') ?? 'unknown', 160)}`);
      }
      const calls = p.tool_calls;
      if (Array.isArray(calls) && calls.length === 0) {
        parts.push('answered');
      } else if (Array.isArray(calls)) {
        const names = calls.map((call) => (typeof call === 'object' && call !== null ? (call as { name?: unknown }).name : undefined))
          .filter((name): name is string => typeof name === 'string');
        parts.push(names.length === calls.length && names.length > 0 ? `→ ${names.join(', ')}`
          : `${calls.length} tool call${calls.length === 1 ? '' : 's'}`);
      } else if (typeof calls === 'number') {
        parts.push(`${calls} tool call${calls === 1 ? '' : 's'}`);
      }
      return withEvidence(parts.join(' · '), p);
    }
    case 'completion.rejected':
    case 'completion.unverified':
      return withEvidence(text(p, 'reason', 'message') !== undefined ? clip(text(p, 'reason', 'message')!, 160) : '', p);
    case 'run.completed':
    case 'run.unverified':
    case 'run.failed':
    case 'run.cancelled': {
      const status = text(p, 'status') ?? event.type.slice('run.'.length);
      const message = text(p, 'message', 'reason', 'error');
      return withEvidence(message !== undefined ? `${status}: ${clip(message, 160)}` : status, p);
    }
    case 'agent.spawned':
    case 'agent.completed': {
      const parts = [text(p, 'role'), text(p, 'agent_id') ?? event.agent_id ?? undefined, text(p, 'status')];
      const task = text(p, 'task');
      if (task !== undefined) {
        parts.push(short(task, 80));
      }
      return parts.filter((part) => part !== undefined).join(' · ');
    }
    default: {
      const keys = Object.keys(p);
      return keys.length === 0 ? '' : clip(JSON.stringify(p), 200);
    }
  }
}

/** The wall-clock time of an event, HH:MM:SS (from its UTC timestamp). */
export function eventClock(ts: string): string {
  const match = /T(\d\d:\d\d:\d\d)/.exec(ts);
  return match !== null ? match[1] : '--:--:--';
}

/** One output-channel line for an event: time, sequence, nesting, type and detail. */
export function renderEvent(event: K1412Event): string {
  const indent = '  '.repeat(Math.max(0, event.depth));
  const agent = event.depth > 0 && event.agent_id ? `[${event.agent_id}] ` : '';
  const detail = eventDetail(event);
  return `${eventClock(event.ts)} #${event.seq} ${indent}${agent}${event.type}${detail !== '' ? ` ${detail}` : ''}`;
}
