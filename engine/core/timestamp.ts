/**
 * ISO-8601 "extended offset date-time" as AWS accepts it for Wait `Timestamp`
 * (Java's ISO_OFFSET_DATE_TIME): `2016-03-14T01:59:00Z`, with optional fraction and
 * a `Z` or `±hh:mm` offset. Returns epoch milliseconds, or undefined when the text
 * is not such a timestamp (including impossible dates such as month 13 or hour 25).
 */
const RE =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:\d{2})$/;

export function parseOffsetDateTime(text: string): number | undefined {
  const m = RE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = "0", frac = "", offset] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59)
    return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  let ms = Date.UTC(
    year,
    month - 1,
    day,
    hour,
    minute,
    second,
    Number(frac.padEnd(3, "0").slice(0, 3)),
  );
  if (offset && offset !== "Z" && offset !== "z") {
    const sign = offset[0] === "-" ? -1 : 1;
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 18 || om > 59) return undefined;
    ms -= sign * (oh * 60 + om) * 60_000;
  }
  return ms;
}
