import { ToolError } from '../tool.js';

/**
 * Slack's `ok: false` codes that are the request's fault, in the user's terms. `subject`
 * names what the step was about (`#general`, `"bob"`) when the action knows it.
 */
const FAILURES: Record<string, (subject: string) => [message: string, suggestion: string]> = {
  channel_not_found: (s) => [
    `Slack has no channel ${s || 'by that name'} that you can see`,
    'Check the channel name (without "#"); for a private channel, make sure you are a member of it',
  ],
  user_not_found: (s) => [
    `Slack has no user ${s || 'by that name'} in this workspace`,
    'Name the person by their Slack @handle, full name or email address',
  ],
  users_not_found: (s) => [
    `Slack has no user with the email address ${s || 'given'}`,
    'Check the email address, or name the person by their Slack @handle',
  ],
  name_taken: (s) => [`A Slack channel named ${s || 'so'} already exists`, 'Pick another channel name, or use the existing channel'],
  invalid_name: () => [`Slack refused the channel name`, 'Use lowercase letters, numbers, hyphens and underscores (at most 80 characters)'],
  invalid_name_specials: () => [
    'Slack refused the channel name: it has characters Slack does not allow',
    'Use lowercase letters, numbers, hyphens and underscores (at most 80 characters)',
  ],
  invalid_name_punctuation: () => [
    'Slack refused the channel name: it is only punctuation',
    'Use lowercase letters, numbers, hyphens and underscores',
  ],
  invalid_name_maxlength: () => ['Slack refused the channel name: it is longer than 80 characters', 'Use a shorter channel name'],
  invalid_name_required: () => ['Slack needs a channel name', 'Name the channel to create'],
  already_in_channel: (s) => [
    `Everyone named is already a member of ${s || 'the channel'}`,
    'Nothing to do; invite someone who is not in it yet',
  ],
  cant_invite_self: () => ['You cannot invite yourself to a Slack channel', 'Name the people to invite other than yourself'],
  cant_invite: (s) => [
    `Slack does not allow inviting that person to ${s || 'the channel'}`,
    'Guests and deactivated accounts cannot be invited; ask a Slack admin',
  ],
  not_in_channel: (s) => [`You are not a member of ${s || 'the channel'}`, 'Join the channel in Slack first, then retry the task'],
  is_archived: (s) => [`The Slack channel ${s || 'given'} is archived`, 'Unarchive the channel in Slack, or use another one'],
  restricted_action: () => [
    'Your Slack workspace’s settings do not allow this action for you',
    'Ask a Slack workspace admin to allow it, or to do it for you',
  ],
  cannot_dm_bot: () => ['Slack does not allow direct messages to that bot', 'Send the message to a person'],
  user_disabled: (s) => [`The Slack account of ${s || 'that person'} is deactivated`, 'Send the message to someone else'],
  msg_too_long: () => ['The message is too long for Slack', 'Shorten the message'],
  no_text: () => ['Slack needs the text of the message', 'Say what the message should say'],
  thread_not_found: (s) => [
    `Slack has no message at that thread_ts in ${s || 'the channel'} to reply to`,
    'Give the ts of a message of that channel, as list_messages or search_messages answers it',
  ],
  message_not_found: (s) => [
    `Slack has no message at that thread_ts in ${s || 'the channel'} to reply to`,
    'Give the ts of a message of that channel, as list_messages or search_messages answers it',
  ],
  cannot_reply_to_message: () => ['Slack does not take replies to that message', 'Reply to a regular message of the channel'],
  // A bot token on a user-token method (search.messages): granting scopes again does not help.
  not_allowed_token_type: () => [
    'Slack does not take this Slack connection’s kind of token for this action',
    'Slack’s search answers only the user’s own token (user scope search:read), not the app’s bot token',
  ],
  invalid_ts_oldest: () => ['Slack refused the start time', 'Give the start as an ISO 8601 date-time, e.g. 2025-03-01T09:00:00Z'],
};

/** Throws the failure for a Slack error code; unknown codes say the code itself. */
export function slackFailure(code: string | undefined, subject = ''): never {
  const known = code ? FAILURES[code] : undefined;
  if (known) {
    const [message, suggestion] = known(subject);
    throw new ToolError('step_failed', `${message} (${code})`, false, suggestion);
  }
  throw new ToolError('step_failed', `Slack rejected the request${code ? `: ${code}` : ''}`, false);
}

/** Thrown by name resolution: the same wording as Slack's own codes. */
export function notFound(kind: 'channel' | 'user', subject: string): never {
  return slackFailure(kind === 'channel' ? 'channel_not_found' : 'user_not_found', subject);
}
