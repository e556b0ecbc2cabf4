import type { RequestHandler } from 'express';
import type { VaultDeps } from '../../domain/deps.js';
import { startAuthorization } from '../../domain/start-authorization.use-case.js';
import { serializeCookie } from '../cookies.js';
import { messagePage } from '../pages.js';

/** GET /oauth/start/:id — the `auth_url`: sets the browser nonce cookie and redirects to the provider. */
export function oauthStartRoute(deps: VaultDeps): RequestHandler {
  const secure = deps.settings.publicBaseUrl.startsWith('https:');
  return async (req, res) => {
    const out = await startAuthorization(String(req.params['id'] ?? ''), deps);
    switch (out.kind) {
      case 'redirect':
        res.setHeader(
          'Set-Cookie',
          serializeCookie(out.cookie.name, out.cookie.value, {
            maxAgeS: out.cookie.maxAgeS,
            path: '/oauth/callback',
            sameSite: 'Lax',
            secure,
          }),
        );
        res.redirect(302, out.location);
        return;
      case 'expired':
        res
          .status(404)
          .type('html')
          .send(
            messagePage('warn', 'This link has expired', [
              'This authorization link is no longer valid.',
              'Go back to the application and try again: it will give you a new link.',
            ]),
          );
        return;
      case 'unavailable':
        res
          .status(503)
          .type('html')
          .send(
            messagePage('err', 'Service unavailable', [`Connecting ${out.service} is not available right now. Please try again later.`]),
          );
        return;
    }
  };
}
