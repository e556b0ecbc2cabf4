import express, { type Router } from 'express';
import type { VaultDeps } from '../../domain/deps.js';
import { decideSandboxConsent, sandboxConsentView, type SandboxDecision } from '../../domain/sandbox-consent.use-case.js';
import { html } from '@tes/html';
import { messagePage, page } from '../pages.js';

const EXPIRED = messagePage('warn', 'This link has expired', [
  'This sandbox authorization link is no longer valid (it was used, or it expired).',
  'Go back to the application and try again: it will give you a new link.',
]);

/**
 * GET /sandbox/consent/:id — the `auth_url` of a test-key task: a page of the vault (no provider
 * involved) that says it is the sandbox and asks Allow or Deny. POST the same path with
 * `decision=allow|deny` stores the sandbox connection or records the refusal (single use).
 */
export function sandboxConsentRoutes(deps: VaultDeps): Router {
  const router = express.Router();
  router.get('/sandbox/consent/:id', async (req, res) => {
    const view = await sandboxConsentView(String(req.params['id'] ?? ''), deps);
    if (view.kind === 'expired') {
      res.status(404).type('html').send(EXPIRED);
      return;
    }
    const { displayName, pending } = view;
    const title = `Sandbox: connect ${displayName}?`;
    res
      .status(200)
      .type('html')
      .send(
        page(
          title,
          html`<p class="flash">
              <strong>Sandbox</strong> — test environment. Nothing is sent to ${displayName} and no real account is connected.
            </p>
            <h1>Connect ${displayName}?</h1>
            <p>
              An application using a <strong>test key</strong> asks to act on ${displayName} for user <strong>${pending.user_id}</strong>.
            </p>
            <p class="scopes">Permissions: ${pending.scopes.join(', ') || 'none'}</p>
            <form method="post" action="/sandbox/consent/${pending._id}">
              <button type="submit" name="decision" value="allow">Allow</button>
              <button type="submit" name="decision" value="deny" class="danger">Deny</button>
            </form>
            <p class="note">Live keys show ${displayName}'s own consent screen here instead.</p>`,
        ),
      );
  });
  router.post('/sandbox/consent/:id', express.urlencoded({ extended: false, limit: '1kb' }), async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const decision = body['decision'];
    if (decision !== 'allow' && decision !== 'deny') {
      res
        .status(400)
        .type('html')
        .send(messagePage('err', 'Choose Allow or Deny', ['Go back and press one of the buttons.']));
      return;
    }
    const out = await decideSandboxConsent(String(req.params['id'] ?? ''), decision satisfies SandboxDecision, deps);
    if (out.kind === 'expired') {
      res.status(404).type('html').send(EXPIRED);
      return;
    }
    res
      .status(200)
      .type('html')
      .send(
        out.kind === 'connected'
          ? messagePage('ok', 'Connected (sandbox)', [`${out.displayName} is connected in the sandbox.`, 'You may close this window.'])
          : messagePage('warn', 'Access not granted (sandbox)', [
              `${out.displayName} was not connected. The application's task will not continue.`,
              'You may close this window.',
            ]),
      );
  });
  return router;
}
