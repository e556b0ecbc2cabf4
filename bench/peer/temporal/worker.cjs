// The peer's worker process: `node worker.cjs <server address> <task queue>` with NODE_PATH set to
// the peer's node_modules (bench/peer/install.sh). Prints "ready" once it polls; stops on SIGTERM.
const path = require('node:path');
const { NativeConnection, Runtime, Worker } = require('@temporalio/worker');
const activities = require('./activities.cjs');

async function main() {
  const [address, taskQueue] = process.argv.slice(2);
  Runtime.install({ logger: new (require('@temporalio/worker').DefaultLogger)('WARN') });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: path.join(__dirname, 'workflows.cjs'),
    activities,
    // The workflow bundle resolves '@temporalio/workflow' from the peer's install, as require does here.
    bundlerOptions: {
      webpackConfigHook: (config) => {
        config.resolve = { ...config.resolve, modules: [...(process.env.NODE_PATH ?? '').split(':').filter(Boolean), 'node_modules'] };
        return config;
      },
    },
  });
  process.on('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
  await connection.close();
}

main().catch((err) => {
  process.stderr.write(`peer worker failed: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
