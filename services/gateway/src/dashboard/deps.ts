import type { IncomingMessage } from 'node:http';
import type { Logger } from '@tes/logger';
import type { AccountStore } from '../domain/account.js';
import type { TaskViewReader } from '../domain/task-view.js';
import type { OwnerStore, SessionStore, UsageStats } from './ports.js';
import type { SessionKeys } from './session.js';
import type { DashboardUpstream } from './upstream.js';

/** What the dashboard's routes use: stores (as ports), the back ends, session keys. */
export interface DashboardDeps {
  accounts: AccountStore;
  views: TaskViewReader;
  owners: OwnerStore;
  usage: UsageStats;
  sessions: SessionStore;
  upstream: DashboardUpstream;
  /** The client's address (the socket's, or X-Forwarded-For from a trusted proxy). */
  clientAddress: (req: IncomingMessage) => string;
  keys: SessionKeys;
  logger: Logger;
}
