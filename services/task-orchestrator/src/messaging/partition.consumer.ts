import {
  PARTITIONS,
  QUEUES,
  type ConnectionChanged,
  type StepResult,
  type TaskCancel,
  type TaskCreate,
  type TaskReconcile,
  type ToolDelete,
  type ToolListRequest,
  type ToolRegister,
} from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import type { TaskWriter } from '../domain/task-writer.js';
import type { ToolAdmin } from '../domain/tool-admin.js';

/**
 * Every replica consumes every partition; single-active-consumer makes exactly one
 * of them the writer of each partition at a time, and `serial` keeps queue order.
 */
export async function consumePartitions(broker: Broker, writer: TaskWriter, tools: ToolAdmin, prefetch: number): Promise<void> {
  for (let p = 0; p < PARTITIONS; p++) {
    await broker.consume(
      { ...QUEUES.orchestratorPartition(p), singleActiveConsumer: true },
      async (d) => {
        switch (d.type) {
          case 'task.create':
            return writer.create(d.data as TaskCreate, (body) => d.reply(body), d.envelope.correlation_id);
          case 'task.cancel':
            return writer.cancel(d.data as TaskCancel, (body) => d.reply(body));
          case 'step.result':
            return writer.stepResult(d.data as StepResult);
          case 'connection.changed':
            return writer.connectionChanged(d.data as ConnectionChanged);
          case 'task.reconcile':
            return writer.reconcile((d.data as TaskReconcile).task_id, (d.data as TaskReconcile).version);
          case 'tool.register':
            return tools.register(d.data as ToolRegister, (body) => d.reply(body));
          case 'tool.list':
            return tools.list(d.data as ToolListRequest, (body) => d.reply(body));
          case 'tool.delete': {
            const cmd = d.data as ToolDelete;
            const deleted = await tools.delete(cmd, (body) => d.reply(body));
            if (deleted) await writer.toolDeleted(cmd.account_id, cmd.environment, cmd.name);
            return undefined;
          }
          default:
            return undefined;
        }
      },
      { prefetch, serial: true },
    );
  }
}
