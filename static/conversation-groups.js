// The conversation list's groups (docs/PROTOCOL.md, "Chat page"): the pinned ones first,
// then by the day of each one's `updated_at` in the browser's time zone — Today,
// Yesterday, Previous 7 days, Previous 30 days — and the older ones by month. Pure: no
// DOM, no fetch.

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * `conversations` (newest first, as the server lists them) in groups, in order:
 * `[{label, conversations}]`. With `pinnedFirst`, those with `pinned` make the first
 * group, "Pinned"; else they stay in their day's group. `now` is the time they are
 * grouped against.
 */
export function groupConversations(conversations, { now = new Date(), pinnedFirst = true } = {}) {
  const groups = [];
  const pinned = pinnedFirst ? conversations.filter((conversation) => conversation.pinned === true) : [];
  if (pinned.length > 0) groups.push({ label: "Pinned", conversations: pinned });
  const byLabel = new Map();
  for (const conversation of conversations) {
    if (pinned.includes(conversation)) continue;
    const label = dayLabel(new Date(conversation.updated_at), now);
    let group = byLabel.get(label);
    if (group === undefined) {
      group = { label, conversations: [] };
      byLabel.set(label, group);
      groups.push(group);
    }
    group.conversations.push(conversation);
  }
  return groups;
}

/** The group of a conversation last added to at `date`, seen at `now`. */
export function dayLabel(date, now) {
  if (Number.isNaN(date.getTime())) return "Older";
  // Whole calendar days between the two local dates (rounded: a day of a clock change
  // is 23 or 25 hours long).
  const days = Math.round((startOfDay(now) - startOfDay(date)) / DAY_MS);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days <= 7) return "Previous 7 days";
  if (days <= 30) return "Previous 30 days";
  return new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric" }).format(date);
}

function startOfDay(date) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
}
