/**
 * Messages between the main thread and the PGlite worker. Values cross by structured
 * clone, which keeps what PGlite's parsers produce (Date, bigint, Uint8Array, JSON
 * objects); errors do not keep their own fields that way, so they cross as plain objects.
 */
import { setOwn } from '../../common/own';

/** What the worker is given at start. */
export interface WorkerStart {
  /** PGlite's data directory, or `memory://`. */
  location: string;
}

/** What the main thread asks of the worker. */
export type WorkerCommand =
  { op: 'query'; sql: string; params: readonly unknown[] } | { op: 'close' };

/** Main thread to worker: a command and the id its reply carries. */
export type WorkerRequest = WorkerCommand & { id: number };

/** Worker to main thread: its start, then one reply per request, in order. */
export type WorkerMessage =
  | { op: 'ready' }
  | { op: 'failed'; error: WireError }
  | { op: 'result'; id: number; rows: unknown[]; affectedRows: number }
  | { op: 'closed'; id: number }
  | { op: 'error'; id: number; error: WireError };

/** An error reduced to its name, message and scalar fields (code, detail, constraint...). */
export interface WireError {
  name: string;
  message: string;
  fields: Record<string, string | number | boolean>;
}

/**
 * Fields left behind: the query's parameters (the caller has them, and they may hold
 * secrets that would then reach a log) and PGlite's call options.
 */
const DROPPED = new Set(['params', 'queryOptions', 'message', 'name', 'stack', '__proto__']);

/** Flattens what a query threw, keeping every scalar field PostgreSQL reported. */
export function toWire(err: unknown): WireError {
  if (!(err instanceof Error)) {
    return { name: 'Error', message: String(err), fields: {} };
  }
  const fields: WireError['fields'] = {};
  for (const [key, value] of Object.entries(err)) {
    if (
      !DROPPED.has(key) &&
      (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    ) {
      setOwn(fields, key, value);
    }
  }
  return { name: err.name, message: err.message, fields };
}

/**
 * An error PGlite raised in the worker, rebuilt on the main thread with the same fields
 * (`code`, `detail`, `constraint`, `table`, `severity`...) that callers check.
 */
export class PgliteError extends Error {
  /** SQLSTATE, e.g. `23505` for a unique violation. */
  declare readonly code?: string;
  declare readonly severity?: string;
  declare readonly detail?: string;
  declare readonly hint?: string;
  declare readonly schema?: string;
  declare readonly table?: string;
  declare readonly column?: string;
  declare readonly constraint?: string;
  declare readonly dataType?: string;

  constructor(wire: WireError) {
    super(wire.message);
    Object.assign(this, wire.fields);
    this.name = wire.name;
  }
}
