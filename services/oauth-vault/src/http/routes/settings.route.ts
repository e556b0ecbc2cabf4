import { randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { normalizeScopes } from '../../oauth-providers/provider-registry.js';
import { connectionIdOf } from '../../domain/connection.js';
import type { VaultDeps } from '../../domain/deps.js';
import { requestAuthorization } from '../../domain/request-authorization.use-case.js';
import { listConnections, revokeConnection } from '../../domain/revoke-connection.use-case.js';
import { InvalidTokenError, type VerifiedSettings } from '../../domain/signed-tokens.js';
import { cookiesOf, serializeCookie } from '@tes/http';
import { queryString } from '../query-string.js';
import { html } from '@tes/html';
import { messagePage, page } from '../pages.js';

const CSRF_COOKIE = 'tes_settings_csrf';

/**
 * The hosted settings page of an end user, reached through a signed, expiring link
 * (`/settings?token=...`, made by `cli settings-link` until the gateway mints them): the user's
 * connections with a Revoke button (a POST carrying a CSRF token bound to the link and to a
 * cookie) and, for broken or revoked ones, a Reconnect link.
 */
export function settingsPageRoute(deps: VaultDeps): RequestHandler {
  return async (req, res) => {
    const token = queryString(req, 'token');
    const link = verifyLink(deps, token, res);
    if (!link || !token) return;
    let nonce = cookiesOf(req)[CSRF_COOKIE];
    if (!nonce || !/^[A-Za-z0-9_-]{32,64}$/.test(nonce)) {
      nonce = randomBytes(24).toString('base64url');
      res.setHeader(
        'Set-Cookie',
        serializeCookie(CSRF_COOKIE, nonce, { maxAgeS: 86400, path: '/settings', sameSite: 'Strict', secure: secure(deps) }),
      );
    }
    const csrf = deps.signer.csrfFor(link.jti, nonce);
    const scope = { account_id: link.acct, environment: link.env };
    const connections = await listConnections({ ...scope, user_id: link.usr }, deps);
    const revoked = queryString(req, 'revoked');
    const revokedName = revoked ? await deps.providers.displayName(revoked, scope) : undefined;
    const names = await Promise.all(connections.map((c) => deps.providers.displayName(c.service, scope)));
    const rows = connections.map((c, i) => {
      const name = names[i] ?? c.service;
      const revoke =
        c.status !== 'revoked'
          ? html`<form method="post" action="/settings/revoke">
              <input type="hidden" name="token" value="${token}" />
              <input type="hidden" name="service" value="${c.service}" />
              <input type="hidden" name="csrf" value="${csrf}" />
              <button type="submit" class="danger">Revoke</button>
            </form>`
          : '';
      const reconnect =
        c.status !== 'connected'
          ? html`<a href="/settings/reconnect?token=${encodeURIComponent(token)}&amp;service=${encodeURIComponent(c.service)}"
              >Reconnect</a
            >`
          : '';
      return html`<tr>
        <td>
          <strong>${name}</strong>
          <div class="scopes">${c.scopes.join(', ') || 'no scopes'}</div>
        </td>
        <td><span class="status ${c.status}">${c.status}</span></td>
        <td>${new Date(c.connected_at).toUTCString()}</td>
        <td>${revoke}${reconnect}</td>
      </tr>`;
    });
    const body = html`<h1>Connected services</h1>
      <p>Services you have allowed the application to use on your behalf.</p>
      ${revokedName ? html`<p class="flash">${revokedName} has been disconnected.</p>` : ''}
      ${
        rows.length > 0
          ? html`<table>
              <thead>
                <tr>
                  <th>Service</th>
                  <th>Status</th>
                  <th>Connected</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>`
          : html`<p class="note">No service is connected.</p>`
      }
      <p class="note">This page is private to you; its link expires ${new Date(link.exp * 1000).toUTCString()}.</p>`;
    res.status(200).type('html').send(page('Connected services', body));
  };
}

/** POST /settings/revoke — form fields token, service, csrf. */
export function settingsRevokeRoute(deps: VaultDeps): RequestHandler {
  return async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const token = typeof form['token'] === 'string' ? form['token'] : undefined;
    const service = typeof form['service'] === 'string' ? form['service'] : '';
    const csrf = typeof form['csrf'] === 'string' ? form['csrf'] : undefined;
    const link = verifyLink(deps, token, res);
    if (!link || !token) return;
    if (!deps.signer.checkCsrf(link.jti, cookiesOf(req)[CSRF_COOKIE], csrf)) {
      res
        .status(403)
        .type('html')
        .send(messagePage('err', 'Request not accepted', ['This form has expired. Reload the settings page and try again.']));
      return;
    }
    const result = await revokeConnection({ account_id: link.acct, environment: link.env, user_id: link.usr, service }, deps);
    if (!result.ok) {
      res
        .status(404)
        .type('html')
        .send(messagePage('warn', 'Nothing to revoke', ['That service is not connected.']));
      return;
    }
    res.redirect(303, `/settings?token=${encodeURIComponent(token)}&revoked=${encodeURIComponent(service)}`);
  };
}

/** GET /settings/reconnect?token&service — a fresh consent for a broken or revoked connection. */
export function settingsReconnectRoute(deps: VaultDeps): RequestHandler {
  return async (req, res) => {
    const link = verifyLink(deps, queryString(req, 'token'), res);
    if (!link) return;
    const service = queryString(req, 'service') ?? '';
    const key = { account_id: link.acct, environment: link.env, user_id: link.usr, service };
    const provider = await deps.providers.resolve(service, key);
    if (!provider?.configured) {
      res
        .status(404)
        .type('html')
        .send(messagePage('warn', 'Unknown service', ['That service cannot be connected here.']));
      return;
    }
    const doc = await deps.connections.find(connectionIdOf(key));
    const scopes = normalizeScopes([...provider.defaultScopes, ...(doc?.scopes ?? [])]);
    const auth = await requestAuthorization(key, scopes, 'settings', deps);
    res.redirect(303, auth.authUrl); // the consent page, like any auth_url
  };
}

function verifyLink(deps: VaultDeps, token: string | undefined, res: Response): VerifiedSettings | undefined {
  if (!token) {
    res
      .status(401)
      .type('html')
      .send(messagePage('err', 'Link required', ['Open this page from the link the application gave you.']));
    return undefined;
  }
  try {
    return deps.signer.verifySettings(token);
  } catch (err) {
    const expired = err instanceof InvalidTokenError && err.reason === 'expired';
    res
      .status(401)
      .type('html')
      .send(
        messagePage('err', expired ? 'This link has expired' : 'This link is not valid', [
          'Ask the application for a new link to your connection settings.',
        ]),
      );
    return undefined;
  }
}

function secure(deps: VaultDeps): boolean {
  return deps.settings.publicBaseUrl.startsWith('https:');
}
