/**
 * ASL spec, "Timestamps": an RFC 3339 date-time "with the further restrictions that
 * an uppercase T must separate the date and time portions, and an uppercase Z must
 * denote that a numeric time zone offset is not present" (2016-03-14T01:59:00Z).
 * AWS refuses the rest at creation: "String does not match RFC3339 timestamp".
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

export function isRfc3339Timestamp(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  // RFC 3339 allows second 60 (a leap second).
  const second = Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 60) return false;
  if (m[7] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return false;
  return true;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
