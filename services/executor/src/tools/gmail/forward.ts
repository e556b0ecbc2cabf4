import { createHash } from 'node:crypto';

/** A Gmail message part (`format=full`): its headers, body (base64url `data`) and sub-parts. */
export interface GPart {
  mimeType?: string;
  filename?: string;
  headers?: { name: string; value: string }[];
  body?: { size?: number; data?: string; attachmentId?: string };
  parts?: GPart[];
}

/** The headers of the original that the forwarded block shows. */
export interface Original {
  from: string;
  date: string;
  subject: string;
  to: string;
  cc: string;
}

/** "Fwd: " once, as mail clients do (a subject already starting with Fwd: or Fw: keeps it). */
export const forwardSubject = (s: string) => (/^fwd?:/i.test(s.trim()) ? s.trim() : `Fwd: ${s.trim()}`);

/** The note, then Gmail's forwarded block: the original's From, Date, Subject, To (and Cc), then its text. */
export function forwardedText(o: Original, body: string, note?: string): string {
  const head = [
    '---------- Forwarded message ---------',
    `From: ${o.from}`,
    `Date: ${o.date}`,
    `Subject: ${o.subject}`,
    `To: ${o.to}`,
    ...(o.cc ? [`Cc: ${o.cc}`] : []),
  ];
  return [...(note ? [note, '', ''] : []), ...head, '', body].join('\r\n');
}

const decode = (data: string | undefined) => Buffer.from(data ?? '', 'base64url').toString('utf8');

function find(p: GPart, mime: string): GPart | undefined {
  if (p.mimeType === mime && !p.filename && p.body?.data) return p;
  for (const c of p.parts ?? []) {
    const hit = find(c, mime);
    if (hit) return hit;
  }
  return undefined;
}

/** The original's text: its text/plain part, else its text/html part without tags, else the snippet. */
export function plainTextOf(payload: GPart | undefined, snippet = ''): string {
  if (!payload) return snippet;
  const plain = find(payload, 'text/plain');
  if (plain) return decode(plain.body?.data).replace(/\r?\n/g, '\r\n');
  const html = find(payload, 'text/html');
  if (!html) return snippet;
  return decode(html.body?.data)
    .replace(/<(br|\/p|\/div|\/li|\/tr)\b[^>]*>/gi, '\r\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .trim();
}

/** Does the message carry attachments (a part with a file name)? */
export function hasAttachments(p: GPart | undefined): boolean {
  return !!p && (!!p.filename || (p.parts ?? []).some(hasAttachments));
}

const encodeWord = (s: string) => (/^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s, 'utf8').toString('base64')}?=`);

/**
 * The forward as an RFC 2822 message, base64url for messages.send: plain text, or with the
 * original attached whole as message/rfc822 (its attachments inside it) when `original` is given.
 * The boundary is derived from the content, so it never occurs in it by chance of a fixed string.
 */
export function forwardMessage(m: { to: string[]; cc?: string[] | undefined; subject: string; text: string; original?: Buffer }): string {
  const head = [
    `To: ${m.to.join(', ')}`,
    ...(m.cc?.length ? [`Cc: ${m.cc.join(', ')}`] : []),
    `Subject: ${encodeWord(m.subject)}`,
    'MIME-Version: 1.0',
  ];
  const textHeaders = ['Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: 8bit'];
  if (!m.original) return Buffer.from([...head, ...textHeaders, '', m.text].join('\r\n'), 'utf8').toString('base64url');
  const boundary = `fwd_${createHash('sha256').update(m.text).update(m.original).digest('hex').slice(0, 32)}`;
  const name = `${m.subject.replace(/^fwd?:\s*/i, '').replace(/["\\\r\n]/g, '') || 'message'}.eml`;
  const parts = [
    [...head, `Content-Type: multipart/mixed; boundary="${boundary}"`, '', `--${boundary}`, ...textHeaders, '', m.text].join('\r\n'),
    [
      `--${boundary}`,
      'Content-Type: message/rfc822',
      'Content-Transfer-Encoding: 8bit',
      `Content-Disposition: attachment; filename="${encodeWord(name)}"`,
      '',
      '',
    ].join('\r\n'),
  ];
  const tail = `\r\n--${boundary}--\r\n`;
  return Buffer.concat([Buffer.from(parts.join('\r\n'), 'utf8'), m.original, Buffer.from(tail, 'utf8')]).toString('base64url');
}
