/** The provider API this tool's live actions call: its base URL (overridable by `GITHUB_API_URL`) and the name users see. */
export const githubApi = { urlVariable: 'GITHUB_API_URL', defaultUrl: 'https://api.github.com', label: 'GitHub' } as const;
