import type { TaskReply } from '@tes/contracts';
import type { Refusal } from '@tes/planner';
import type { Task } from './task.js';

/** The create answer: the task as created (version 1), whatever planning did since; `planner` is for the gateway's read model. */
export function createdReply(task: Task, version = task.version): TaskReply {
  return {
    ok: true,
    version,
    task: {
      id: task._id,
      status: task.status,
      tool: task.tool,
      created_at: task.created_at,
      metadata: task.metadata,
      ...(task.planner ? { planner: task.planner } : {}),
    },
  };
}

export function errorReply(code: string, message: string): TaskReply {
  return { ok: false, error: { code, message } };
}

/** A refused create: its code (422 at the gateway), what would make the request clear, and what is missing. */
export function refusalReply(r: Refusal): TaskReply {
  return {
    ok: false,
    error: { code: r.code, message: r.message, suggestion: r.suggestion, ...(r.missing?.length ? { missing: r.missing } : {}) },
  };
}
