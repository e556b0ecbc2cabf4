import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@tes/logger';
import { DashError } from './errors.js';
import type { Tab } from './layout.js';
import { errorPage } from './pages/error.page.js';
import { send, signedInCtx } from './request.js';

const TABS: Tab[] = ['keys', 'webhooks', 'tasks', 'connections', 'usage'];

export const pageNotFound: RequestHandler = (req, _res, next) =>
  next(new DashError(404, 'Page not found', `There is no dashboard page ${req.path.slice(0, 100)}.`));

/** Every failure as an HTML page (never the API's JSON), under the tab it happened in. */
export function errorPages(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const tab = TABS.find((t) => req.path.startsWith(`/${t}`));
    let e: DashError;
    if (err instanceof DashError) e = err;
    else if ((err as { type?: string }).type === 'entity.too.large')
      e = new DashError(413, 'Form too large', 'The form sent too much data.');
    else if ((err as { type?: string }).type === 'entity.parse.failed')
      e = new DashError(400, 'Form not readable', 'The form could not be read.');
    else {
      logger.error('dashboard error', { path: req.path, error: err instanceof Error ? err : String(err) });
      e = new DashError(
        500,
        'Something went wrong',
        'An internal error occurred. Try again; if it keeps happening, contact your operator.',
      );
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    send(res, errorPage(signedInCtx(res), { title: e.title, message: e.message, ...(tab ? { tab } : {}) }), e.status);
  };
}
