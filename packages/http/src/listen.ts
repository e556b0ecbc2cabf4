import type { Server } from 'node:net';

/**
 * A server that could not start listening. Its message is the one line a service
 * prints before exiting 1 (`PORT 8443 is in use (EADDRINUSE)`): the variable that
 * sets the port, the port and the system's code; a stack would add nothing.
 */
export class ListenError extends Error {
  constructor(
    readonly variable: string,
    readonly port: number,
    readonly host: string,
    readonly code: string,
  ) {
    super(`${variable} ${port} ${ListenError.reason(code, host)} (${code})`);
    this.name = 'ListenError';
  }

  private static reason(code: string, host: string): string {
    if (code === 'EADDRINUSE') return 'is in use';
    if (code === 'EACCES') return 'may not be bound by this user';
    if (code === 'EADDRNOTAVAIL') return `cannot be bound on ${host}: no such local address`;
    return `cannot be listened on at ${host}`;
  }
}

/**
 * Listens on host:port; resolves once listening, rejects with a ListenError if the
 * port cannot be taken (instead of the unhandled 'error' event that crashes the
 * process with a stack). `variable` names the setting the port comes from.
 */
export function listen(server: Server, port: number, host: string, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(new ListenError(variable, port, host, err.code ?? 'UNKNOWN'));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
