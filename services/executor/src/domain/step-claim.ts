/** A held claim on running a step (store/step-claim.repository.ts). */
export interface StepClaim {
  id: string;
}

/** The newest claim of a step: its generation and when its lease runs out. */
export interface StepClaimLatest {
  gen: number;
  expires_at: Date;
}

/** Who runs a step right now: two executors never run one step at the same time. */
export interface StepClaimStore {
  /** The newest claim of a step (a read that `acquire` needs; callers may make it alongside others). */
  latest(key: string): Promise<StepClaimLatest | null>;
  /** Generation 0: the claim when the step was never claimed before, else undefined (then `latest` and `acquire`). */
  claimFirst(key: string, leaseMs: number, now?: number): Promise<StepClaim | undefined>;
  /** The claim when this caller may run the step now; undefined while another holds a live one. */
  acquire(key: string, leaseMs: number, now?: number, latest?: StepClaimLatest | null): Promise<StepClaim | undefined>;
  /** Gives a claim back when the step will run again later: its lease ends now. */
  release(claim: StepClaim): Promise<void>;
}
