#!/usr/bin/env node
// Container probe: GET http://127.0.0.1:<ops port><path> (default /healthz); exit 0 on HTTP 200,
// 1 otherwise. The ops port is OPS_PORT, or the default of SERVICE (set in the image).
// Used by the image's HEALTHCHECK, by docker-compose.yml (/readyz) and by hand (kubectl exec); the
// Kubernetes probes are httpGet on the ops port. 127.0.0.1 answers whether OPS_HOST is it or 0.0.0.0.
// CommonJS with no dependency: it starts fast and runs from any directory.
'use strict';

const DEFAULT_OPS_PORTS = {
  gateway: 8080,
  'task-orchestrator': 8090,
  executor: 8091,
  'oauth-vault': 8092,
  'webhook-dispatcher': 8094,
};

const path = process.argv[2] || '/healthz';
const port = process.env.OPS_PORT || DEFAULT_OPS_PORTS[process.env.SERVICE || ''];
if (!port) {
  process.stderr.write('healthcheck: set OPS_PORT or SERVICE\n');
  process.exit(1);
}

fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(3000) })
  .then(async (res) => {
    const body = await res.text();
    process.stdout.write(`${res.status} ${body.slice(0, 200)}\n`);
    process.exit(res.status === 200 ? 0 : 1);
  })
  .catch((err) => {
    process.stderr.write(`healthcheck: ${path} on port ${port}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
