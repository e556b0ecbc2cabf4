import type { RequestHandler } from 'express';
import { ASSET_VERSION } from '../assets.js';

/** GET /dashboard/assets/…: a static asset, cached for good when asked for by its current version. */
export function assetRoute(type: string, body: string): RequestHandler {
  return (req, res) => {
    res.setHeader('Cache-Control', req.query['v'] === ASSET_VERSION ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    res.type(type).send(body);
  };
}
