/** An answer the dashboard shows as a page with this status. */
export class DashError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
    this.name = 'DashError';
  }
}
