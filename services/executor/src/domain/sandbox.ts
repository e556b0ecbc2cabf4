/**
 * An object of the simulated providers used with test keys: one world per account, user
 * and service (`scope`); the store keeps them (store/sandbox.repository.ts).
 */
export interface SandboxDoc {
  _id: string;
  scope: string;
  kind: string;
  /** What the object belongs to: a repository, a channel, a calendar, a database. */
  container: string;
  seq: number;
  data: Record<string, unknown>;
  created_at: Date;
}

/** The sandbox world, as the sandbox tools use it. */
export interface SandboxStore {
  /**
   * Creates an object once per idempotency key: the first call makes it with the next
   * sequence number of its container; later calls with the same key answer the same object.
   */
  createOnce(
    scope: string,
    kind: string,
    container: string,
    idempotencyKey: string,
    make: (seq: number) => Record<string, unknown>,
  ): Promise<SandboxDoc>;
  /** Objects of a kind, newest first; `container` undefined means all containers. */
  list(scope: string, kind: string, container?: string, limit?: number): Promise<SandboxDoc[]>;
  findBySeq(scope: string, kind: string, container: string, seq: number): Promise<SandboxDoc | null>;
  containers(scope: string, kind: string): Promise<string[]>;
  /** Replaces an object's data (the sandbox's own, single-field updates such as labels). */
  setData(id: string, data: Record<string, unknown>): Promise<void>;
}
