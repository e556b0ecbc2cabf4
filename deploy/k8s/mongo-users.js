// One MongoDB user per service, readWrite on its own database only, and tes_admin (the operator
// CLI's Jobs) readWrite on the five. Idempotent: run it again to change a password (updateUser).
// Run it as a user with userAdminAnyDatabase (the root user), with the passwords in the environment,
// never in a file:
//   TES_GATEWAY_MONGO_PASSWORD=... TES_TASK_ORCHESTRATOR_MONGO_PASSWORD=... TES_EXECUTOR_MONGO_PASSWORD=...
//   TES_OAUTH_VAULT_MONGO_PASSWORD=... TES_WEBHOOK_DISPATCHER_MONGO_PASSWORD=... TES_ADMIN_MONGO_PASSWORD=...
//   mongosh "mongodb://root:PASS@mongo-0.mongo.tes-data.svc:27017/admin?replicaSet=rs0" deploy/k8s/mongo-users.js
// With REPLICA_SET and REPLICA_MEMBER set (docker-compose.prod.yml's mongo-init), it first initiates
// that single-member replica set if it is not yet (connect with directConnection=true).
/* global db, rs, process, sleep, print */
const SERVICES = ['gateway', 'task-orchestrator', 'executor', 'oauth-vault', 'webhook-dispatcher'];
const snake = (s) => s.replace(/-/g, '_');
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

if (process.env.REPLICA_SET) {
  let initiated = true;
  try {
    rs.status();
  } catch (e) {
    if (e.codeName !== 'NotYetInitialized') throw e;
    initiated = false;
  }
  if (!initiated) {
    rs.initiate({ _id: process.env.REPLICA_SET, members: [{ _id: 0, host: env('REPLICA_MEMBER') }] });
    print(`replica set ${process.env.REPLICA_SET} initiated`);
  }
  for (let i = 0; i < 60 && !db.hello().isWritablePrimary; i++) sleep(1000);
  if (!db.hello().isWritablePrimary) throw new Error('no primary after 60 s');
}

const admin = db.getSiblingDB('admin');
function upsertUser(user, password, roles) {
  if (admin.getUser(user)) admin.updateUser(user, { pwd: password, roles });
  else admin.createUser({ user, pwd: password, roles });
  print(`user ${user}: ${roles.map((r) => r.db).join(', ')}`);
}
for (const service of SERVICES) {
  const name = snake(service);
  upsertUser(`tes_${name}`, env(`TES_${name.toUpperCase()}_MONGO_PASSWORD`), [{ role: 'readWrite', db: `tes_${name}` }]);
}
upsertUser(
  'tes_admin',
  env('TES_ADMIN_MONGO_PASSWORD'),
  SERVICES.map((s) => ({ role: 'readWrite', db: `tes_${snake(s)}` })),
);
