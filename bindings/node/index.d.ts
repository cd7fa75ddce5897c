// TypeScript declarations for the pgrest Node binding (docs/bindings.md, "Node").
import type { IncomingMessage, ServerResponse } from 'node:http';

/** PostgREST's configuration options by name ("db-uri", "db-schemas",
 * "db-anon-role", "jwt-secret", "app.settings.x", ...). */
export type Options = Record<string, string | number | boolean>;

/** The library's own failures (bad configuration, schema load). HTTP
 * answers, errors included, are responses, never exceptions. */
export class PgrestError extends Error {
  readonly name: 'PgrestError';
  /** PGRSTnnn or a SQLSTATE; null for configuration errors. */
  readonly code: string | null;
  readonly details: string | null;
  readonly hint: string | null;
  /** The HTTP status PostgREST would answer with; 0 when not an HTTP error. */
  readonly status: number;
}

/** An identity the host verified itself: the request runs as role (null:
 * db-anon-role) with request.jwt.claims = claims (its "role" set to role). */
export interface Identity {
  role?: string | null;
  claims?: Record<string, unknown> | string | null;
}

export interface HandlerOptions {
  /** Serve only URLs under this prefix, with it removed ("/api"); others go
   * to next() or get 404. */
  prefix?: string;
  /** The host's verified identity for req, used instead of the
   * Authorization header; null/undefined: read the Authorization header. */
  identity?: (req: IncomingMessage) => Identity | null | undefined |
    Promise<Identity | null | undefined>;
  /** false: buffer every response; a number: stream bodies over that many
   * bytes; default (true): over 64 KiB, as pgrest-server does. */
  streaming?: boolean | number;
  /** Request bodies go to the library as they arrive. A bulk POST of rows
   * (JSON array, NDJSON, CSV) whose body passes this many bytes streams
   * into PostgreSQL in bounded memory; default (0): the library's 1 MiB;
   * null or false: never (the library collects the body whole). */
  streamBodyThreshold?: number | false | null;
}

export type Handler = (req: IncomingMessage, res: ServerResponse,
  next?: (err?: unknown) => void) => Promise<void>;

export class Context {
  /** Throws PgrestError for an unknown option or an invalid value. */
  constructor(options?: Options);
  set(key: string, value: string | number | boolean): void;
  get(key: string): string | null;
  /** Loads (or reloads) the schema cache; blocks this thread on PostgreSQL:
   * for start-up. Throws PgrestError. */
  loadSchema(): void;
  /** The same on a worker thread, for reloads while serving. */
  loadSchemaAsync(): Promise<void>;
  loadSchemaFile(path: string): void;
  saveSchemaFile(path: string): void;
  /** PostgREST's config reload: options replace every option set before;
   * without them the same ones are read again, in-database settings on top. */
  reloadConfig(options?: Options): void;
  /** LISTEN on db-channel on the library's own thread: NOTIFY pgrst reloads
   * the schema cache (or the configuration) inside this process. */
  startListener(): void;
  stopListener(): void;
  ready(): boolean;
  /** Prometheus text (PostgREST's metrics). */
  metrics(): string | null;
  /** Frees the context; throws while requests still run on it. */
  close(): void;
  /** A request handler for node:http, Express (app.use) and Fastify
   * (reply.hijack(); handler(request.raw, reply.raw)). */
  handler(options?: HandlerOptions): Handler;
}

/** libpgrest's version, e.g. "0.1.0". */
export const version: string;
/** The PostgREST release whose behaviour the library follows. */
export const postgrestVersion: string;
