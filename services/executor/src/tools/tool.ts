import type { StepRun, WaitingData } from '@tes/contracts';
import type { TaskFailureCode } from '@tes/errors';
import type { Logger } from '@tes/logger';
import type { Broker } from '@tes/messaging';
import type { SandboxStore } from '../domain/sandbox.js';
import { perProvider, type ProviderName } from './provider-apis.js';

/** Base URLs of the live providers' APIs (env GITHUB_API_URL, SLACK_API_URL, …: see provider-apis.ts). */
export type ProviderUrls = Record<ProviderName, string>;

export interface EngineSettings {
  providerUrls: ProviderUrls;
  /** Attempts of one provider call on 5xx / 429 before the step fails (spec: 3). */
  maxAttempts: number;
  /** Exponential backoff: base, base×2, base×4 … capped at backoffMaxMs. */
  backoffMs: number;
  backoffMaxMs: number;
  /** A Retry-After longer than this fails the step at once with rate_limited. */
  retryAfterMaxMs: number;
  /** Per HTTP request to a provider. */
  requestTimeoutMs: number;
  vaultTimeoutMs: number;
  /**
   * false (default): a test-key step asks the vault for the user's sandbox connection first and
   * waits for consent without one, as live does. true: the sandbox runs without asking.
   */
  sandboxAutoConnect: boolean;
  http: { allowHosts: readonly string[]; allowPrivate?: boolean; maxBytes: number; timeoutMs: number };
}

export const DEFAULT_SETTINGS: EngineSettings = {
  providerUrls: perProvider((api) => api.defaultUrl),
  maxAttempts: 3,
  backoffMs: 500,
  backoffMaxMs: 8000,
  retryAfterMaxMs: 20_000,
  requestTimeoutMs: 10_000,
  vaultTimeoutMs: 5000,
  sandboxAutoConnect: false,
  http: { allowHosts: [], maxBytes: 1_048_576, timeoutMs: 10_000 },
};

/** What a tool may use besides its input. */
export interface ToolEnv {
  settings: EngineSettings;
  logger: Logger;
  sandbox: SandboxStore;
  /** For credential.get to the oauth-vault; live steps of connected services need it. */
  broker?: Broker | undefined;
  /** The step's correlation id (the API request id of its task), sent on credential.get. */
  correlationId?: string | undefined;
}

export interface ToolContext {
  step: StepRun;
  /** The step's input with its references resolved, as the action receives it (for failure advice). */
  input?: Record<string, unknown>;
  signal: AbortSignal;
  env: ToolEnv;
}

/** A tool failure the orchestrator reports as the task's error (spec 7.4 codes). */
export class ToolError extends Error {
  constructor(
    readonly code: TaskFailureCode,
    message: string,
    readonly recoverable: boolean,
    readonly suggestion?: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** The user has not connected the service (or not with the scopes): the task waits for consent. Not a recorded outcome. */
export class AuthorizationRequired extends Error {
  constructor(readonly authorization: WaitingData) {
    super(authorization.message);
    this.name = 'AuthorizationRequired';
  }
}

/** Our own infrastructure failed (vault not answering): nothing is recorded, the step.run message is retried. */
export class TransientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransientError';
  }
}

/** A schema-checked input field as text (undefined/null → fallback). */
export function text(v: unknown, fallback = ''): string {
  if (v === undefined || v === null) return fallback;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export type ActionImpl = (input: Record<string, unknown>, ctx: ToolContext) => Promise<Record<string, unknown>>;
