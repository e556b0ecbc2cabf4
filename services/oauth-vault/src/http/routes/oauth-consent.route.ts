import { randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { openConsentLink, useConsentLink } from '../../domain/consent-link.use-case.js';
import type { VaultDeps } from '../../domain/deps.js';
import type { StartOutcome } from '../../domain/start-authorization.use-case.js';
import { cookiesOf, serializeCookie } from '@tes/http';
import { html } from '@tes/html';
import { contentSecurityPolicy, messagePage, page } from '../pages.js';

const CSRF_COOKIE = 'tes_consent_csrf';

/**
 * GET /oauth/consent/:token — the `auth_url`: a page saying which application (the account id:
 * the vault knows no account names) and which of its users this connects, with a Continue
 * button. Opening it uses nothing (link previews and mail scanners open links too).
 */
export function consentPageRoute(deps: VaultDeps): RequestHandler {
  return async (req, res) => {
    const token = String(req.params['token'] ?? '');
    const opened = await openConsentLink(token, deps);
    if (opened.kind === 'gone') return sendGone(res);
    const { link, pending } = opened;
    let nonce = cookiesOf(req)[CSRF_COOKIE];
    if (!nonce || !/^[A-Za-z0-9_-]{32,64}$/.test(nonce)) {
      nonce = randomBytes(24).toString('base64url');
      // Lax: a top-level GET from the application's site keeps an existing nonce (other tabs' forms stay valid);
      // a cross-site POST never carries it.
      res.setHeader(
        'Set-Cookie',
        serializeCookie(CSRF_COOKIE, nonce, { maxAgeS: 3600, path: '/oauth/consent', sameSite: 'Lax', secure: secure(deps) }),
      );
    }
    const provider = await deps.providers.resolve(pending.service, pending);
    if (!provider?.configured) return sendStart(res, { kind: 'unavailable', service: pending.service }, deps);
    const service = provider.displayName;
    res.setHeader('Content-Security-Policy', contentSecurityPolicy([new URL(provider.authorizeUrl).origin]));
    const body = html`<h1>Connect ${service}</h1>
      <p>An application asks to use your ${service} account on your behalf.</p>
      <table>
        <tbody>
          <tr>
            <th>Application</th>
            <td data-testid="application"><code>${link.acct}</code></td>
          </tr>
          <tr>
            <th>Its user</th>
            <td data-testid="user"><code>${link.usr}</code></td>
          </tr>
          <tr>
            <th>Service</th>
            <td>${service}</td>
          </tr>
          <tr>
            <th>Permissions</th>
            <td class="scopes">${pending.scopes.join(', ') || 'basic access'}</td>
          </tr>
        </tbody>
      </table>
      <p class="note">
        Continue only if you asked this application for it and <strong>${link.usr}</strong> is your account there. If someone sent you this
        link, close this page: continuing would connect your ${service} account to their user.
      </p>
      <form method="post" action="/oauth/consent">
        <input type="hidden" name="token" value="${token}" />
        <input type="hidden" name="csrf" value="${deps.signer.csrfFor(link.jti, nonce)}" />
        <p><button type="submit">Continue to ${service}</button></p>
      </form>
      <p class="note">This link works once and expires ${new Date(link.exp * 1000).toUTCString()}.</p>`;
    res
      .status(200)
      .type('html')
      .send(page(`Connect ${service}`, body));
  };
}

/** POST /oauth/consent — form fields token, csrf: uses the link and sends the browser to the provider. */
export function consentContinueRoute(deps: VaultDeps): RequestHandler {
  return async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const token = typeof form['token'] === 'string' ? form['token'] : '';
    const csrf = typeof form['csrf'] === 'string' ? form['csrf'] : undefined;
    const opened = await openConsentLink(token, deps);
    if (opened.kind === 'gone') return sendGone(res);
    if (!deps.signer.checkCsrf(opened.link.jti, cookiesOf(req)[CSRF_COOKIE], csrf)) {
      res
        .status(403)
        .type('html')
        .send(messagePage('err', 'Request not accepted', ['This form has expired. Open the link from the application again.']));
      return;
    }
    sendStart(res, await useConsentLink(opened.link, deps), deps);
  };
}

/** GET /oauth/start/:id — the bearer links handed out before consent links: never valid again. */
export const legacyStartRoute: RequestHandler = (_req, res) => sendGone(res);

function sendStart(res: Response, out: StartOutcome, deps: VaultDeps): void {
  switch (out.kind) {
    case 'redirect':
      res.setHeader(
        'Set-Cookie',
        serializeCookie(out.cookie.name, out.cookie.value, {
          maxAgeS: out.cookie.maxAgeS,
          path: '/oauth/callback',
          sameSite: 'Lax',
          secure: secure(deps),
        }),
      );
      res.redirect(303, out.location);
      return;
    case 'expired':
      sendGone(res);
      return;
    case 'unavailable':
      res
        .status(503)
        .type('html')
        .send(messagePage('err', 'Service unavailable', [`Connecting ${out.service} is not available right now. Please try again later.`]));
      return;
  }
}

function sendGone(res: Response): void {
  res
    .status(410)
    .type('html')
    .send(
      messagePage('warn', 'This link was used or has expired', [
        'A connection link works once and only for a few minutes.',
        'Ask the application for a new one.',
      ]),
    );
}

function secure(deps: VaultDeps): boolean {
  return deps.settings.publicBaseUrl.startsWith('https:');
}
