/** The provider API this tool's live actions call: its base URL (overridable by `GMAIL_API_URL`) and the name users see. */
export const gmailApi = { urlVariable: 'GMAIL_API_URL', defaultUrl: 'https://gmail.googleapis.com/gmail/v1', label: 'Gmail' } as const;
