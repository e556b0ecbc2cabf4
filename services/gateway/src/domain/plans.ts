/** Spec 8.2. Enterprise limits are set per account by the operator. */
export const PLANS = {
  prototyping: { requests_per_minute: 100, concurrent_tasks: 10 },
  production: { requests_per_minute: 1000, concurrent_tasks: 100 },
  enterprise: { requests_per_minute: 10000, concurrent_tasks: 1000 },
} as const;

export type Plan = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as Plan[];
