// The peer's two workflows, the same work as this service's one-step and three-step text tasks
// ('Echo "…"' and 'Echo "…", uppercase it, then count the words'). Bundled by the Temporal worker;
// plain CommonJS because '@temporalio/workflow' resolves from the peer's install, outside the workspace.
const { proxyActivities, workflowInfo } = require('@temporalio/workflow');

const { step } = proxyActivities({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } });

/** One step; the step itself then calls the receiver, as this service's webhook announces a task's end. */
async function oneStep(input) {
  return step({ action: 'echo', text: input.text, deliver: { url: input.webhook, taskId: workflowInfo().workflowId } });
}

/** Three chained steps, each a separate activity; the last one calls the receiver. */
async function threeSteps(input) {
  const echoed = await step({ action: 'echo', text: input.text });
  const upper = await step({ action: 'uppercase', text: echoed.text });
  return step({ action: 'count_words', text: upper.text, deliver: { url: input.webhook, taskId: workflowInfo().workflowId } });
}

module.exports = { oneStep, threeSteps };
