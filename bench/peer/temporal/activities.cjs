// The peer's steps: the text tool's actions, then (for a workflow's last step) the POST to the
// receiver in the same body as this service's task.complete webhook names the task and its time.
const ACTIONS = {
  echo: (text) => ({ text }),
  uppercase: (text) => ({ text: text.toUpperCase() }),
  count_words: (text) => ({ words: text.split(/\s+/).filter(Boolean).length, text }),
};

async function step({ action, text, deliver }) {
  const run = ACTIONS[action];
  if (!run) throw new Error(`unknown action ${action}`);
  const output = run(text);
  if (deliver) {
    const res = await fetch(deliver.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'task.complete', task_id: deliver.taskId, timestamp: new Date().toISOString(), result: output }),
    });
    // A refused delivery fails the activity, and Temporal retries it.
    if (!res.ok) throw new Error(`receiver answered ${res.status}`);
  }
  return output;
}

module.exports = { step };
