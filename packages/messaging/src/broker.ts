import {
  connect,
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Options,
  type RecoveringChannelModel,
} from 'amqplib';
import {
  CATALOG,
  DEFAULT_PARTITIONS,
  ENVELOPE_VERSION,
  EXCHANGES,
  newMessageId,
  readMessage,
  routingKeyFor,
  validateMessage,
  validateReply,
  type Envelope,
  type MessageDataMap,
  type MessageDefinition,
  type MessagesRoutedTo,
  type MessageType,
  type PartitionProbe,
  type ReadMessage,
  type ReplyOf,
  type RequestType,
} from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { coalesceFrameWrites } from './coalesce-writes.js';
import { holdDecision, holdHeaders, holdQueueOptions, resolveHoldOptions, type HoldOptions } from './hold.js';
import { queueTypeArguments, type QueueType } from './queue-type.js';
import { isPermanentFailure } from './permanent-failure.js';

export interface QueueSpec {
  name: string;
  exchange: string;
  /**
   * The catalog routing key of the messages this queue receives: its handler gets deliveries of
   * those types only (any other message is dead-lettered as malformed). Without it, any message.
   */
  routingKey?: string;
  bindings: readonly string[];
  /** One active consumer at a time across all replicas: the single writer of a partition. */
  singleActiveConsumer?: boolean;
  /**
   * This process's own queue (a broadcast to every replica): exclusive to the connection, gone
   * with it, re-declared on reconnect; no dead letters. What was published while it did not exist
   * is lost: a consumer whose `ConsumerHandle.attachment()` changed must assume it missed messages.
   */
  exclusive?: boolean;
}

/**
 * One attachment of a consumer: the channel it consumes on, from its opening to its close.
 * A single-active-consumer queue can become active on another replica only once this
 * channel has closed, so what the consumer learned while attached (an in-memory count, a
 * cache) is valid while `open` stays true and the `id` is unchanged.
 */
export interface ConsumerAttachment {
  /** Distinct for every attachment in this process (a re-attach after a reconnect gets a new id). */
  readonly id: number;
  /** False once the channel has closed: its unacknowledged messages have gone back to the queue. */
  readonly open: boolean;
}

/** One message handed to a consumer; `reply` takes the request's reply type (`never` for a plain message). */
export interface Delivery<T extends MessageType = MessageType> {
  type: T;
  data: MessageDataMap[T];
  envelope: Envelope<MessageDataMap[T]>;
  redelivered: boolean;
  /** The consumer attachment this message was delivered on. */
  consumer: ConsumerAttachment;
  /** Answers a request made with `broker.request`; a no-op for plain messages. */
  reply(body: ReplyOf<T>): Promise<void>;
  /** For a request: when its requester stops waiting (epoch ms); undefined for plain messages. */
  deadline: number | undefined;
  /**
   * Publishes (with confirms) another message that carries this request's reply-to, correlation
   * and deadline: whoever handles it answers the original requester. For handing a request on to
   * another queue; for a plain message it is a plain publish.
   */
  forward<T extends MessageType>(type: T, data: MessageDataMap[T], opts?: PublishOptions): Promise<string>;
}

/** A delivery of one of the types `T`, narrowed by `d.type` (`switch (d.type) { case 'task.cancel': d.data.task_id }`). */
export type AnyDelivery<T extends MessageType = MessageType> = { [K in T]: Delivery<K> }[T];

/** The message types a queue receives: those of its `routingKey`, or all. */
export type QueueMessageType<Q extends QueueSpec> = Q extends { exchange: infer E extends string; routingKey: infer K extends string }
  ? MessagesRoutedTo<E, K>
  : MessageType;

/** What a consumer of queue `Q` is handed. */
export type DeliveryOn<Q extends QueueSpec> = AnyDelivery<QueueMessageType<Q>>;

export type Handler<T extends MessageType = MessageType> = (delivery: AnyDelivery<T>) => Promise<void>;

/** What `consume` returns: the consumer's current attachment, undefined while it has none (broker unreachable). */
export interface ConsumerHandle {
  attachment(): ConsumerAttachment | undefined;
  /**
   * True once a message (a probe included) has arrived on the current attachment: on a
   * single-active-consumer queue, this process is then the queue's active consumer, and stays so
   * until the attachment closes (RabbitMQ moves a queue's active consumer only when it goes).
   */
  active(): boolean;
  /**
   * Hands a single-active-consumer queue on to the next consumer in line: starts no new message,
   * waits for the ones being handled, runs `beforeClose` (still the active consumer: last
   * bookkeeping), then closes the channel. The broker puts the messages this one held back in
   * their places and activates the next consumer; this one attaches again, at the back of the line.
   */
  release(beforeClose?: () => Promise<void>): Promise<void>;
  /** As `release`, but attaches again only on `resume`: meanwhile this process is no consumer of the queue at all. */
  suspend(beforeClose?: () => Promise<void>): Promise<void>;
  /** Attaches a suspended consumer again (at the back of the line). */
  resume(): Promise<void>;
}

export interface ConsumeOptions {
  prefetch?: number;
  /** Handle one message at a time, in queue order (partition consumers). */
  serial?: boolean;
  /** Attempts of a failing handler before the message is dead-lettered. */
  maxAttempts?: number;
  /** Registered but not attached until ConsumerHandle.resume (the consumer waits to learn something first). */
  suspended?: boolean;
}

export interface PublishOptions {
  partitionKey?: string;
  messageId?: string;
  correlationId?: string;
  occurredAt?: string;
}

/** Thrown by publish/request while the broker is unreachable: callers retry, nothing is buffered here. */
export class BrokerUnavailableError extends Error {
  constructor(message = 'message broker unavailable') {
    super(message);
    this.name = 'BrokerUnavailableError';
  }
}

export class RequestTimeoutError extends Error {
  constructor(type: string, ms: number) {
    super(`no reply to ${type} within ${ms} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/** An attachment as the broker keeps it: whether a message came on it, whether it is being released. */
interface LiveAttachment extends ConsumerAttachment {
  open: boolean;
  delivered: boolean;
  releasing: boolean;
}

interface Registration {
  queue: QueueSpec;
  handler: Handler;
  options: Required<ConsumeOptions>;
  channel?: Channel | undefined;
  consumerTag?: string | undefined;
  attachment?: LiveAttachment | undefined;
  /** Its messages being handled (or queued behind one another, for a serial consumer). */
  handling: Set<Promise<void>>;
  /** Not to be attached (ConsumerHandle.suspend) until resumed. */
  suspended: boolean;
}

interface PendingRequest {
  resolve(body: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export interface BrokerOptions {
  url: string;
  source: string;
  logger: Logger;
  /** Prefix of every exchange and queue name: separate stacks (or tests) on one broker. */
  namespace?: string;
  /** Told, for each valid message, its queue and how long it waited since `occurred_at` (metrics). */
  onConsume?: (queue: string, lagSeconds: number) => void;
  /** Sent as the `connection_name` client property: names this connection in rabbitmqctl and the management UI. */
  connectionName?: string;
  /**
   * The AMQP heartbeat asked for, in seconds (default 15, as AMQP_HEARTBEAT_S): a broker or network
   * that goes silent is noticed within about two intervals and recovery starts, instead of after
   * the server's 60 s (RabbitMQ's default) or never.
   */
  heartbeatSeconds?: number;
  /**
   * The type of the durable queues it declares (AMQP_QUEUE_TYPE): `classic` (default), or `quorum`,
   * replicated over a RabbitMQ cluster's nodes, for production. Chosen when a deployment starts: a
   * queue's type cannot change once it exists (RabbitMQ refuses the declare), see docs/operations.md.
   * The per-replica exclusive queues stay classic (quorum queues cannot be exclusive).
   */
  queueType?: QueueType;
  /**
   * Told of every message sent to its queue's dead-letter queue, and why: `malformed` (not a valid
   * message), `permanent` (its handler failed in a way no retry mends, see isPermanentFailure),
   * `attempts` (its handler failed maxAttempts times) or `unsupported` (written by a newer version,
   * and no consumer of its queue could read it within the hold bounds). For a metric; the `.dead`
   * queue keeps the message.
   */
  onDeadLetter?: (queue: string, reason: DeadLetterReason) => void;
  /**
   * How long a message this version cannot read (an unknown type, a newer envelope) waits in
   * `<queue>.hold` before it is offered again, and the bounds after which it is dead-lettered.
   */
  hold?: HoldOptions;
  /** The messages this version reads (default: CATALOG). A test stands in an older release's to run two versions side by side. */
  catalog?: Readonly<Record<string, MessageDefinition>>;
  /**
   * The deployment's partition count (PARTITIONS; default DEFAULT_PARTITIONS): the routing keys of
   * partitioned messages. Every service of a deployment must use the same.
   */
  partitions?: number;
}

export type DeadLetterReason = 'malformed' | 'permanent' | 'attempts' | 'unsupported';

const DEFAULT_HEARTBEAT_S = 15;
const REPLY_TO = 'amq.rabbitmq.reply-to';
const REPLY_DEADLINE_HEADER = 'x-reply-deadline';
const RETRY_DELAY_MS = 200;
const RETRY_DELAY_MAX_MS = 10_000;

/** Exponential backoff before a failed message is requeued: 0.2 s, 0.4 s, … capped at 10 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(RETRY_DELAY_MS * 2 ** (attempt - 1), RETRY_DELAY_MAX_MS);
}

/**
 * RabbitMQ transport on amqplib's own connection recovery: after every (re)connect,
 * `setup` re-declares the topology and re-attaches every registered consumer.
 * Publishes wait for the broker's confirm; nothing is buffered in memory.
 */
export class Broker {
  private connection?: RecoveringChannelModel;
  private model: ChannelModel | undefined;
  private confirmChannel: ConfirmChannel | undefined;
  private replyChannel: Channel | undefined;
  private readonly registrations: Registration[] = [];
  /** Partition queue families this process publishes to, declared at every (re)connect. */
  private readonly families: ((p: number) => QueueSpec)[] = [];
  private readonly pending = new Map<string, PendingRequest>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly attempts = new Map<string, number>();
  private stopping = false;
  private connected = false;
  private attachments = 0;

  private readonly ns: string;
  /** The deployment's partition count: where partitioned messages are routed, how many partition queues a group consumes. */
  readonly partitions: number;
  private readonly catalog: Readonly<Record<string, MessageDefinition>>;
  private readonly holding: Required<HoldOptions>;

  constructor(private readonly options: BrokerOptions) {
    this.ns = options.namespace ? `${options.namespace}.` : '';
    this.catalog = options.catalog ?? CATALOG;
    this.partitions = options.partitions ?? DEFAULT_PARTITIONS;
    this.holding = resolveHoldOptions(options.hold);
  }

  /** The broker-side name of an exchange or queue. */
  name(base: string): string {
    return `${this.ns}${base}`;
  }

  async connect(): Promise<void> {
    this.connection = await connect(withHeartbeat(this.options.url, this.options.heartbeatSeconds ?? DEFAULT_HEARTBEAT_S), {
      // amqplib leaves Nagle's algorithm on: a small frame written while an earlier one is
      // unacknowledged then waits for the broker's delayed ACK, about 40 ms (measured here on
      // replies and on publishes right after them). Every message is latency-sensitive.
      noDelay: true,
      ...(this.options.connectionName ? { clientProperties: { connection_name: this.options.connectionName } } : {}),
      recovery: {
        initialDelay: 100,
        maxDelay: 5000,
        maxRetries: Infinity,
        initialMaxRetries: 20,
        setup: (model: ChannelModel) => this.setup(model),
      },
    });
    this.connection.on('disconnect', (err: Error) => {
      this.connected = false;
      this.model = undefined;
      this.confirmChannel = undefined;
      this.replyChannel = undefined;
      this.failPending(new BrokerUnavailableError(`broker connection lost: ${err.message}`));
      if (!this.stopping) this.options.logger.warn('broker disconnected, recovering', { error: err.message });
    });
    this.connection.on('connect', () => this.options.logger.info('broker connected'));
    this.connection.on('error', (err: Error) => this.options.logger.warn('broker connection error', { error: err.message }));
  }

  get isConnected(): boolean {
    return this.connected && !this.stopping;
  }

  private async setup(model: ChannelModel): Promise<void> {
    this.model = model;
    // The frames of one turn of the event loop leave in one write (coalesce-writes.ts).
    coalesceFrameWrites(model);
    await this.openPublishChannel(model);
    for (const family of this.families) await this.declareFamily(family);
    await this.openReplyChannel(model);
    for (const reg of this.registrations) if (!reg.suspended) await this.attach(reg, model);
    this.connected = true;
  }

  /**
   * The confirm channel every publish goes through. A channel can die alone while its connection
   * lives (the broker closes it on a protocol error: a declare whose arguments differ from the
   * queue's, a publish to a missing exchange); every later publish would then fail while the
   * broker counts as connected, so a new one is opened in its place.
   */
  private async openPublishChannel(model: ChannelModel): Promise<void> {
    const ch = await model.createConfirmChannel();
    ch.on('error', (err: Error) => this.options.logger.warn('publish channel error', { error: err.message }));
    ch.on('close', () => {
      if (this.confirmChannel !== ch) return;
      this.confirmChannel = undefined;
      this.reopen('publish', model, () => this.openPublishChannel(model));
    });
    await ch.assertExchange(this.name(EXCHANGES.commands), 'direct', { durable: true });
    await ch.assertExchange(this.name(EXCHANGES.events), 'topic', { durable: true });
    await ch.assertExchange(this.name(EXCHANGES.dead), 'direct', { durable: true });
    this.confirmChannel = ch;
  }

  /** The channel replies arrive on (direct reply-to); reopened like the publish channel. */
  private async openReplyChannel(model: ChannelModel): Promise<void> {
    const reply = await model.createChannel();
    reply.on('error', (err: Error) => this.options.logger.warn('reply channel error', { error: err.message }));
    reply.on('close', () => {
      if (this.replyChannel !== reply) return;
      this.replyChannel = undefined;
      // Direct reply-to answers only on the channel that asked: the requests in flight will get none.
      this.failPending(new BrokerUnavailableError('reply channel closed'));
      this.reopen('reply', model, () => this.openReplyChannel(model));
    });
    await reply.consume(REPLY_TO, (msg) => this.onReply(msg), { noAck: true });
    this.replyChannel = reply;
  }

  /** Opens a channel that died alone again, after a pause, until it opens or the connection goes. */
  private reopen(which: string, model: ChannelModel, open: () => Promise<void>): void {
    const live = () => !this.stopping && this.model === model;
    if (!live()) return; // the connection went too: recovery's setup opens everything again
    this.options.logger.warn(`${which} channel closed alone, opening a new one`);
    void (async () => {
      for (let n = 1; live(); n++) {
        await sleep(retryDelayMs(Math.min(n, 3)));
        if (!live()) return;
        try {
          await open();
          return;
        } catch (err) {
          this.options.logger.warn(`${which} channel could not be opened again`, { error: String(err) });
        }
      }
    })();
  }

  /** Declares a queue with its dead-letter queue and bindings. */
  async declare(queue: QueueSpec, channel?: Channel): Promise<void> {
    const ch = channel ?? this.confirmChannel;
    if (!ch) throw new BrokerUnavailableError();
    const name = this.name(queue.name);
    if (queue.exclusive) {
      await ch.assertQueue(name, { exclusive: true, autoDelete: true, durable: false });
      for (const key of queue.bindings) await ch.bindQueue(name, this.name(queue.exchange), key);
      return;
    }
    const type = queueTypeArguments(this.options.queueType);
    await ch.assertQueue(`${name}.dead`, { durable: true, arguments: type });
    await ch.bindQueue(`${name}.dead`, this.name(EXCHANGES.dead), queue.name);
    await ch.assertQueue(name, {
      durable: true,
      arguments: {
        ...type,
        'x-dead-letter-exchange': this.name(EXCHANGES.dead),
        'x-dead-letter-routing-key': queue.name,
        ...(queue.singleActiveConsumer ? { 'x-single-active-consumer': true } : {}),
      },
    });
    for (const key of queue.bindings) await ch.bindQueue(name, this.name(queue.exchange), key);
  }

  async consume<Q extends QueueSpec>(
    queue: Q,
    handler: Handler<QueueMessageType<Q>>,
    options: ConsumeOptions = {},
  ): Promise<ConsumerHandle> {
    const reg: Registration = {
      queue,
      // Sound: handle() hands this queue's handler only the message types of its routing key.
      handler: handler as unknown as Handler,
      options: {
        prefetch: options.prefetch ?? 16,
        serial: options.serial ?? false,
        maxAttempts: options.maxAttempts ?? 10,
        suspended: options.suspended ?? false,
      },
      handling: new Set(),
      suspended: options.suspended ?? false,
    };
    this.registrations.push(reg);
    if (this.model && !reg.suspended) await this.attach(reg, this.model);
    return {
      attachment: () => (reg.attachment?.open ? reg.attachment : undefined),
      active: () => reg.attachment?.open === true && reg.attachment.delivered && !reg.attachment.releasing,
      release: (beforeClose) => this.release(reg, beforeClose),
      suspend: async (beforeClose) => {
        reg.suspended = true;
        await this.release(reg, beforeClose);
      },
      resume: async () => {
        if (!reg.suspended) return;
        reg.suspended = false;
        if (this.model && !reg.channel) await this.attach(reg, this.model);
      },
    };
  }

  /**
   * Declares, now and at every reconnect, the partition queues of `family` for this deployment's
   * partition count: what this process publishes then always has its queue, whichever of its
   * consumers and publishers a partition count change reaches first (docs/operations.md).
   */
  async declarePartitions(family: (p: number) => QueueSpec): Promise<void> {
    this.families.push(family);
    if (this.confirmChannel) await this.declareFamily(family);
  }

  private async declareFamily(family: (p: number) => QueueSpec): Promise<void> {
    for (let p = 0; p < this.partitions; p++) await this.declare(family(p));
  }

  private async release(reg: Registration, beforeClose?: () => Promise<void>): Promise<void> {
    const { attachment, channel } = reg;
    if (!attachment?.open || attachment.releasing || !channel) return;
    attachment.releasing = true;
    await Promise.allSettled([...reg.handling]);
    if (beforeClose) await beforeClose().catch((err: unknown) => this.options.logger.warn('release hook failed', { error: String(err) }));
    // The close event attaches the consumer again (a new channel: the back of the line).
    await channel.close().catch(() => undefined);
  }

  /**
   * Sends a probe straight to one queue (default exchange): its active consumer learns it is
   * (ConsumerHandle.active) and acknowledges it; no handler sees it.
   */
  async probe(queue: QueueSpec, data: PartitionProbe): Promise<void> {
    if (!this.confirmChannel || this.stopping) throw new BrokerUnavailableError();
    const env = this.envelope('partition.probe', data, {});
    validateMessage(env);
    // Not persistent: a probe lost with a broker restart is sent again by the next tick.
    await this.confirmed('', this.name(queue.name), Buffer.from(JSON.stringify(env)), { ...persistent(env), persistent: false });
  }

  private async attach(reg: Registration, model: ChannelModel): Promise<void> {
    const ch = await model.createChannel();
    const attachment: LiveAttachment = { id: ++this.attachments, open: true, delivered: false, releasing: false };
    ch.on('error', (err: Error) => this.options.logger.warn('consumer channel error', { queue: reg.queue.name, error: err.message }));
    ch.on('close', () => {
      attachment.open = false;
      if (reg.channel !== ch) return;
      reg.channel = undefined;
      // A channel can die alone (e.g. a protocol error, a release); re-open it unless the connection went too.
      if (!this.stopping && this.model === model && !reg.suspended) {
        this.attach(reg, model).catch((err: unknown) =>
          this.options.logger.warn('consumer re-attach failed', { queue: reg.queue.name, error: String(err) }),
        );
      }
    });
    await this.declare(reg.queue, ch);
    await ch.prefetch(reg.options.prefetch);
    let chain: Promise<void> = Promise.resolve();
    const { consumerTag } = await ch.consume(this.name(reg.queue.name), (msg) => {
      if (!msg) return;
      // On a single-active-consumer queue only the active consumer is sent anything.
      attachment.delivered = true;
      if (reg.options.serial) {
        chain = chain.then(() => this.track(reg, this.handle(reg, ch, msg, attachment)));
        this.countHandling(reg, chain);
      } else {
        void this.track(reg, this.handle(reg, ch, msg, attachment));
      }
    });
    reg.channel = ch;
    reg.consumerTag = consumerTag;
    reg.attachment = attachment;
  }

  private track(reg: Registration, p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    this.countHandling(reg, p);
    return p.finally(() => this.inFlight.delete(p));
  }

  /** Counts `p` among the registration's messages being handled until it settles (release waits for them). */
  private countHandling(reg: Registration, p: Promise<void>): void {
    reg.handling.add(p);
    void p.finally(() => reg.handling.delete(p)).catch(() => undefined);
  }

  private async handle(reg: Registration, ch: Channel, msg: ConsumeMessage, attachment: LiveAttachment): Promise<void> {
    // Stopping: start no new work (a serial consumer still holds prefetched messages). Left
    // unacknowledged, the message returns to its queue, in order, when the channel closes.
    // Channel closed: the message is back in its queue already (and, on a single-active-consumer
    // queue, another replica may be its consumer now): handling it here would act twice.
    // Releasing: the same, the message goes back to its queue for the next consumer.
    if (this.stopping || !attachment.open || attachment.releasing) return;
    const log = this.options.logger;
    let read: ReadMessage;
    try {
      read = readMessage(JSON.parse(msg.content.toString('utf8')), this.catalog);
      if (read.known && read.type === 'partition.probe') {
        // Its arrival has told this consumer it is active: nothing for the handler.
        safe(() => ch.ack(msg));
        return;
      }
      if (read.known) checkRoute(reg.queue, read.type, this.catalog);
    } catch (err) {
      log.error('malformed message dead-lettered', { queue: reg.queue.name, error: (err as Error).message });
      safe(() => ch.nack(msg, false, false));
      this.options.onDeadLetter?.(reg.queue.name, 'malformed');
      return;
    }
    const { envelope } = read;
    const deadline = Number((msg.properties.headers as Record<string, unknown> | undefined)?.[REPLY_DEADLINE_HEADER]);
    if (msg.properties.replyTo && Number.isFinite(deadline) && Date.now() > deadline) {
      log.warn('request dropped: its requester gave up waiting', {
        queue: reg.queue.name,
        type: envelope.type,
        message_id: envelope.id,
        correlation_id: envelope.correlation_id,
      });
      safe(() => ch.ack(msg));
      return;
    }
    if (!read.known) {
      await this.hold(reg, ch, msg, envelope, read.reason);
      return;
    }
    const parsed = read; // of a type this version knows
    this.options.onConsume?.(reg.queue.name, Math.max(0, (Date.now() - Date.parse(envelope.occurred_at)) / 1000));
    const replyProps = msg.properties.replyTo
      ? {
          replyTo: msg.properties.replyTo as string,
          correlationId: msg.properties.correlationId as string,
          ...(Number.isFinite(deadline) ? { headers: { [REPLY_DEADLINE_HEADER]: deadline } } : {}),
        }
      : {};
    // Validated above against the catalog: data and envelope are of `parsed.type`.
    const delivery = {
      type: parsed.type,
      data: parsed.data,
      envelope,
      redelivered: msg.fields.redelivered,
      consumer: attachment,
      reply: (body: object) => this.sendReply(msg, body),
      deadline: msg.properties.replyTo && Number.isFinite(deadline) ? deadline : undefined,
      forward: <F extends MessageType>(type: F, data: MessageDataMap[F], opts: PublishOptions = {}) =>
        this.publishWith(type, data, opts, replyProps),
    } as unknown as AnyDelivery;
    const started = performance.now();
    try {
      await reg.handler(delivery);
      this.attempts.delete(envelope.id);
      safe(() => ch.ack(msg));
      // One line per request/reply handled, under the requester's correlation id (an API request id).
      if (msg.properties.replyTo) {
        log.info('request handled', {
          queue: reg.queue.name,
          type: parsed.type,
          message_id: envelope.id,
          correlation_id: envelope.correlation_id,
          duration_ms: Math.round(performance.now() - started),
        });
      }
    } catch (err) {
      // A permanent failure (the database refusing the document, a poison message) would fail
      // the same way on every retry, holding up a serial partition meanwhile: dead-letter it now.
      const permanent = isPermanentFailure(err);
      const n = (this.attempts.get(envelope.id) ?? 0) + 1;
      if (permanent || n >= reg.options.maxAttempts) {
        this.attempts.delete(envelope.id);
        log.error('message dead-lettered', {
          queue: reg.queue.name,
          type: parsed.type,
          message_id: envelope.id,
          correlation_id: envelope.correlation_id,
          attempts: n,
          reason: permanent ? 'permanent' : 'attempts',
          error: String(err),
        });
        safe(() => ch.nack(msg, false, false));
        this.options.onDeadLetter?.(reg.queue.name, permanent ? 'permanent' : 'attempts');
        return;
      }
      this.attempts.set(envelope.id, n);
      log.warn('handler failed, message requeued', {
        queue: reg.queue.name,
        type: parsed.type,
        message_id: envelope.id,
        correlation_id: envelope.correlation_id,
        attempt: n,
        error: String(err),
      });
      await sleep(retryDelayMs(n));
      safe(() => ch.nack(msg, false, true));
    }
  }

  /**
   * A message this version cannot read waits in `<queue>.hold` (declared on first use), whose
   * per-message TTL dead-letters it back to the queue through the default exchange, for a consumer
   * that can read it (a newer replica during a rolling update). Past the hold bounds it is
   * dead-lettered. A replica's own (exclusive) queue has neither: the message is dropped there.
   */
  private async hold(reg: Registration, ch: Channel, msg: ConsumeMessage, envelope: Envelope, reason: string): Promise<void> {
    const log = this.options.logger;
    const queue = reg.queue.name;
    const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
    const decision = holdDecision(headers, this.holding, Date.now());
    const fields = {
      queue,
      type: envelope.type,
      message_id: envelope.id,
      correlation_id: envelope.correlation_id,
      reason,
      holds: decision.holds,
    };
    if (reg.queue.exclusive) {
      log.warn('unreadable message dropped (a replica queue has no hold)', fields);
      safe(() => ch.nack(msg, false, false));
      return;
    }
    if (decision.expired) {
      log.error('unreadable message dead-lettered: no consumer read it within the hold bounds', fields);
      safe(() => ch.nack(msg, false, false));
      this.options.onDeadLetter?.(queue, 'unsupported');
      return;
    }
    const name = this.name(queue);
    try {
      // On the consumer's channel: a failure closes it, and the message returns to its queue.
      await ch.assertQueue(`${name}.hold`, holdQueueOptions(name, this.options.queueType));
      await this.confirmed('', `${name}.hold`, msg.content, {
        ...copiedProperties(msg),
        headers: holdHeaders(headers, decision),
        expiration: String(this.holding.delayMs),
      });
    } catch (err) {
      log.warn('unreadable message could not be held, requeued', { ...fields, error: String(err) });
      await sleep(retryDelayMs(3));
      safe(() => ch.nack(msg, false, true));
      return;
    }
    safe(() => ch.ack(msg));
    log.warn('unreadable message held for a consumer that can read it', {
      ...fields,
      holds: decision.holds + 1,
      retry_in_ms: this.holding.delayMs,
    });
  }

  /** Publishes on the confirm channel and resolves once the broker has confirmed. */
  private confirmed(exchange: string, key: string, content: Buffer, props: Options.Publish): Promise<void> {
    const ch = this.confirmChannel;
    if (!ch || this.stopping) return Promise.reject(new BrokerUnavailableError());
    return new Promise<void>((resolve, reject) => {
      try {
        ch.publish(exchange, key, content, props, (err) =>
          err ? reject(new BrokerUnavailableError(`publish not confirmed: ${String(err)}`)) : resolve(),
        );
      } catch (err) {
        reject(new BrokerUnavailableError(`publish failed: ${(err as Error).message}`));
      }
    });
  }

  private envelope<T extends MessageType>(type: T, data: MessageDataMap[T], opts: PublishOptions): Envelope<MessageDataMap[T]> {
    return {
      v: ENVELOPE_VERSION,
      id: opts.messageId ?? newMessageId(),
      type,
      source: this.options.source,
      occurred_at: opts.occurredAt ?? new Date().toISOString(),
      ...(opts.partitionKey !== undefined ? { partition_key: opts.partitionKey } : {}),
      ...(opts.correlationId !== undefined ? { correlation_id: opts.correlationId } : {}),
      data,
    };
  }

  /** Publishes and resolves once the broker has confirmed the message. */
  async publish<T extends MessageType>(type: T, data: MessageDataMap[T], opts: PublishOptions = {}): Promise<string> {
    return this.publishWith(type, data, opts, {});
  }

  private async publishWith<T extends MessageType>(
    type: T,
    data: MessageDataMap[T],
    opts: PublishOptions,
    props: { replyTo?: string; correlationId?: string; headers?: Record<string, unknown> },
  ): Promise<string> {
    if (!this.confirmChannel || this.stopping) throw new BrokerUnavailableError();
    const env = this.envelope(type, data, opts);
    validateMessage(env);
    const { exchange } = CATALOG[type];
    const key = routingKeyFor(type, opts.partitionKey, this.partitions);
    await this.confirmed(this.name(exchange), key, Buffer.from(JSON.stringify(env)), { ...persistent(env), ...props });
    return env.id;
  }

  /**
   * Request/reply over direct reply-to, with a timeout. The reply is checked against the
   * request's reply schema: one that does not match rejects with ReplyValidationError.
   */
  async request<T extends RequestType>(
    type: T,
    data: MessageDataMap[T],
    opts: PublishOptions & { timeoutMs: number },
  ): Promise<ReplyOf<T>> {
    const ch = this.replyChannel;
    if (!ch || this.stopping) throw new BrokerUnavailableError();
    const env = this.envelope(type, data, opts);
    validateMessage(env);
    const correlationId = env.id;
    const { exchange } = CATALOG[type];
    const key = routingKeyFor(type, opts.partitionKey, this.partitions);
    const body = await new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(correlationId);
        reject(new RequestTimeoutError(type, opts.timeoutMs));
      }, opts.timeoutMs);
      this.pending.set(correlationId, { resolve, reject, timer });
      try {
        const ok = ch.publish(this.name(exchange), key, Buffer.from(JSON.stringify(env)), {
          ...persistent(env),
          replyTo: REPLY_TO,
          correlationId,
          // Past this instant the requester has given up (and told its caller so): don't act on it.
          headers: { [REPLY_DEADLINE_HEADER]: Date.now() + opts.timeoutMs },
        });
        void ok;
      } catch (err) {
        clearTimeout(timer);
        this.pending.delete(correlationId);
        reject(new BrokerUnavailableError(`request failed: ${(err as Error).message}`));
      }
    });
    return validateReply(type, body);
  }

  private onReply(msg: ConsumeMessage | null): void {
    if (!msg) return;
    const id = msg.properties.correlationId as string | undefined;
    const p = id ? this.pending.get(id) : undefined;
    if (!p || !id) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    try {
      p.resolve(JSON.parse(msg.content.toString('utf8')));
    } catch (err) {
      p.reject(err as Error);
    }
  }

  private async sendReply(msg: ConsumeMessage, body: object): Promise<void> {
    const replyTo = msg.properties.replyTo as string | undefined;
    if (!replyTo) return;
    const ch = this.confirmChannel;
    if (!ch) throw new BrokerUnavailableError();
    ch.publish('', replyTo, Buffer.from(JSON.stringify(body)), {
      correlationId: msg.properties.correlationId as string,
      contentType: 'application/json',
    });
  }

  private failPending(err: Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
  }

  /** Number of messages ready in a queue (ops, tests). */
  async queueDepth(name: string): Promise<number> {
    if (!this.model) throw new BrokerUnavailableError();
    const ch = await this.model.createChannel();
    // A queue that does not exist closes this channel with an 'error' event; unheard, amqplib
    // rethrows it while reading frames and closes the whole connection (every consumer's channel
    // with it). The rejection of checkQueue below says it already.
    ch.on('error', () => undefined);
    try {
      const q = await ch.checkQueue(this.name(name));
      return q.messageCount;
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  /**
   * Graceful stop: cancel consumers (no new work), let in-flight handlers finish
   * within `timeoutMs`, run `drained` (still attached: e.g. a partition writer's last
   * bookkeeping), then close; anything unacked returns to its queue.
   */
  async close(timeoutMs = 10_000, drained?: () => Promise<void>): Promise<void> {
    this.stopping = true;
    for (const reg of this.registrations) {
      // A single-active-consumer queue is not cancelled: that would activate the next replica at once,
      // ahead of the messages this one still holds (order broken, two writers). Closing the channel
      // below requeues them first; meanwhile `stopping` keeps new deliveries from being handled.
      if (reg.queue.singleActiveConsumer) continue;
      if (reg.channel && reg.consumerTag) await reg.channel.cancel(reg.consumerTag).catch(() => undefined);
    }
    const idle = Promise.allSettled([...this.inFlight]);
    await Promise.race([idle, sleep(timeoutMs)]);
    if (drained) await drained().catch((err: unknown) => this.options.logger.warn('drain hook failed', { error: String(err) }));
    // Close the consumer channels before the connection: an ack sent just before a connection
    // close is dropped, while a channel's close-ok means the broker has processed its acks (and
    // requeues the unacked rest).
    for (const reg of this.registrations) await reg.channel?.close().catch(() => undefined);
    this.failPending(new BrokerUnavailableError('broker closing'));
    await this.connection?.close().catch(() => undefined);
  }
}

/** The URL with `heartbeat` set in its query, where amqplib reads the value it negotiates. */
function withHeartbeat(url: string, seconds: number): string {
  const u = new URL(url);
  u.searchParams.set('heartbeat', String(seconds));
  return u.toString();
}

/** A queue with a routing key receives only the catalog's messages of that route. */
function checkRoute(queue: QueueSpec, type: MessageType, catalog: Readonly<Record<string, MessageDefinition>>): void {
  const route = catalog[type];
  if (queue.routingKey !== undefined && route && (route.exchange !== queue.exchange || route.routingKey !== queue.routingKey)) {
    throw new Error(`message ${type} does not belong on queue ${queue.name}`);
  }
}

function persistent(env: Envelope<unknown>) {
  return {
    persistent: true,
    contentType: 'application/json',
    messageId: env.id,
    type: env.type,
    timestamp: Math.floor(Date.now() / 1000),
  };
}

/** What a held message keeps of the original: its id, type, reply-to, correlation (headers are set by the hold). */
function copiedProperties(msg: ConsumeMessage): Options.Publish {
  const p = msg.properties;
  return {
    persistent: true,
    contentType: (p.contentType as string | undefined) ?? 'application/json',
    ...(p.messageId ? { messageId: p.messageId as string } : {}),
    ...(p.type ? { type: p.type as string } : {}),
    ...(p.timestamp ? { timestamp: p.timestamp as number } : {}),
    ...(p.replyTo ? { replyTo: p.replyTo as string } : {}),
    ...(p.correlationId ? { correlationId: p.correlationId as string } : {}),
  };
}

function safe(fn: () => void): void {
  try {
    fn();
  } catch {
    // The channel is gone: the broker redelivers the message to another consumer.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
