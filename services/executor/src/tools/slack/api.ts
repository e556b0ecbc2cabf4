/** The provider API this tool's live actions call: its base URL (overridable by `SLACK_API_URL`) and the name users see. */
export const slackApi = { urlVariable: 'SLACK_API_URL', defaultUrl: 'https://slack.com/api', label: 'Slack' } as const;
