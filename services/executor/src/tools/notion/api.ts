/** The provider API this tool's live actions call: its base URL (overridable by `NOTION_API_URL`) and the name users see. */
export const notionApi = { urlVariable: 'NOTION_API_URL', defaultUrl: 'https://api.notion.com/v1', label: 'Notion' } as const;
