import { BUILT_IN_TOOLS } from '@tes/catalog';
import type { ReplyOf, ToolDelete, ToolListRequest, ToolRegister } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { ToolStore } from './ports.js';

type Reply<T extends 'tool.register' | 'tool.list' | 'tool.delete'> = (body: ReplyOf<T>) => Promise<void>;

/** Names a custom tool may not take: built-in tools and the OAuth services of built-in tools. */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set(BUILT_IN_TOOLS.flatMap((t) => [t.name, ...(t.service ? [t.service] : [])]));

/**
 * Registration of custom tools. It runs on the account's partition consumer, in order with the
 * account's task creates: a task created after the register answer sees the tool.
 */
export class ToolAdmin {
  constructor(
    private readonly tools: ToolStore,
    private readonly logger: Logger,
  ) {}

  async register(cmd: ToolRegister, reply: Reply<'tool.register'>): Promise<void> {
    if (RESERVED_TOOL_NAMES.has(cmd.tool.name)) {
      return reply({ ok: false, error: { code: 'invalid_request', message: `name "${cmd.tool.name}" is a built-in tool or service` } });
    }
    const { tool, created } = await this.tools.put(cmd.account_id, cmd.environment, cmd.tool);
    this.logger.info(created ? 'custom tool registered' : 'custom tool replaced', {
      account_id: cmd.account_id,
      environment: cmd.environment,
      tool: cmd.tool.name,
    });
    return reply({ ok: true, created, tool });
  }

  async list(cmd: ToolListRequest, reply: Reply<'tool.list'>): Promise<void> {
    return reply({ ok: true, tools: await this.tools.list(cmd.account_id, cmd.environment) });
  }

  /** True when the tool existed (the caller then fails the tasks waiting on it). */
  async delete(cmd: ToolDelete, reply: Reply<'tool.delete'>): Promise<boolean> {
    if (!(await this.tools.delete(cmd.account_id, cmd.environment, cmd.name))) {
      await reply({ ok: false, error: { code: 'not_found', message: `No tool ${cmd.name}` } });
      return false;
    }
    this.logger.info('custom tool deleted', { account_id: cmd.account_id, environment: cmd.environment, tool: cmd.name });
    await reply({ ok: true });
    return true;
  }
}
