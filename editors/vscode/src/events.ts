/**
 * Rendering of `k1412/event` notifications (SPEC §3) as one readable line each.
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

/** What evidence a run needs, has, and still lacks (SPEC §9). */
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
  const nested = record.evidence;
  const holder = (typeof nested === 'object' && nested !== null ? nested : record) as Record<string, unknown>;
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
    case 'tool.started':
      return `${toolName(p)} ${argumentSummary(p.arguments ?? p.args)}`.trim();
    case 'tool.completed': {
      const ok = p.ok === false ? 'failed' : 'ok';
      const error = text(p, 'error');
      const duration = typeof p.duration_ms === 'number' ? ` (${p.duration_ms} ms)` : '';
      return withEvidence(`${toolName(p)} ${ok}${duration}${error !== undefined ? `: ${clip(error, 160)}` : ''}`, p);
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
      const calls = p.tool_calls;
      if (Array.isArray(calls)) {
        parts.push(`${calls.length} tool call${calls.length === 1 ? '' : 's'}`);
      } else if (typeof calls === 'number') {
        parts.push(`${calls} tool call${calls === 1 ? '' : 's'}`);
      }
      return parts.join(' · ');
    }
    case 'completion.rejected':
    case 'completion.unverified':
      return withEvidence(text(p, 'reason', 'message') !== undefined ? clip(text(p, 'reason', 'message')!, 160) : '', p);
    case 'run.completed':
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
