/**
 * TEST ONLY. Points where a dispatcher can be made to kill itself (DISPATCHER_CRASH_POINT), so
 * that an end-to-end test hits each one exactly, with a real process and a real SIGKILL:
 * - after_store: a batch of task events stored (a webhook among them), their messages not acked yet;
 * - before_send: attempt claimed, nothing sent;
 * - after_response: the receiver answered, the attempt not recorded;
 * - after_record: the attempt recorded, the event not moved on (final state, pending document).
 */
export const CRASH_POINTS = ['after_store', 'before_send', 'after_response', 'after_record'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** A hook that SIGKILLs this process the first time `point` is reached; undefined when unset (inert). */
export function crashHook(point: CrashPoint | '' | undefined): ((at: CrashPoint) => void) | undefined {
  if (!point) return undefined;
  return (at) => {
    if (at === point) process.kill(process.pid, 'SIGKILL');
  };
}
