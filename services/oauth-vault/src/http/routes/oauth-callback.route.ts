import type { RequestHandler } from 'express';
import { completeAuthorization, type CallbackOutcome } from '../../domain/complete-authorization.use-case.js';
import type { VaultDeps } from '../../domain/deps.js';
import { cookiesOf } from '@tes/http';
import { queryString } from '../query-string.js';
import { html } from '@tes/html';
import { messagePage } from '../pages.js';

/** GET /oauth/callback — the provider's redirect after consent (or refusal). */
export function oauthCallbackRoute(deps: VaultDeps): RequestHandler {
  return async (req, res) => {
    const outcome = await completeAuthorization(
      { state: queryString(req, 'state'), code: queryString(req, 'code'), error: queryString(req, 'error'), cookies: cookiesOf(req) },
      deps,
    );
    const { status, body } = render(outcome);
    res.status(status).type('html').send(body);
  };
}

function render(o: CallbackOutcome): { status: number; body: string } {
  switch (o.kind) {
    case 'connected':
      return {
        status: 200,
        body: messagePage('ok', 'Connected — you may close this window', [
          `${o.displayName} is now connected.`,
          'The application will continue with what it was doing. You can close this window.',
        ]),
      };
    case 'denied':
      return {
        status: 200,
        body: messagePage('warn', 'Access not granted', [
          `You did not grant access to ${o.displayName}, so nothing was connected.`,
          'The application has been told. You can close this window.',
        ]),
      };
    case 'provider_error':
      return {
        status: 400,
        body: messagePage('err', `${o.displayName} reported a problem`, [
          `${o.displayName} did not complete the authorization (${o.error}).`,
          html`<a href="${o.retryUrl}">Try again</a>`,
        ]),
      };
    case 'exchange_failed':
      return {
        status: 502,
        body: messagePage('err', 'The connection could not be completed', [
          `${o.displayName} did not confirm the authorization. Nothing was connected.`,
          html`<a href="${o.retryUrl}">Try again</a>`,
        ]),
      };
    case 'invalid_state': {
      const why = {
        missing: 'This page was opened without an authorization request.',
        expired: 'This authorization request has expired.',
        invalid: 'This authorization request is not valid.',
        other_browser: 'This authorization was started in another browser or the browser blocked its cookie.',
        replayed: 'This authorization request has already been used.',
      }[o.reason];
      return { status: 400, body: messagePage('err', 'Authorization not accepted', [why, 'Go back to the application and start again.']) };
    }
  }
}
