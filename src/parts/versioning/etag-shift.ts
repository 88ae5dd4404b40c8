/**
 * ETags in an older version. A record's ETag is its revision (`"r7"`); in a version whose records of that resource
 * differ from the newest, the answer is another representation, so its tag is another strong tag: `"r7.<version>"`
 * (RFC 9110 §8.8.3: a strong tag is unique across the representations of a resource). Conditional requests are
 * compared with the tags of the caller's version: a tag of another version never matches (If-Match: 412;
 * If-None-Match: the full answer).
 */
export const versionedTag = (tag: string, version: string): string => {
  const m = /^(W\/)?"(r\d+)"$/.exec(tag);
  return m ? `${m[1] ?? ''}"${m[2]}.${version}"` : tag;
};

/** The tag that never matches: what a tag of another version is turned into (the handler then refuses it). */
const FOREIGN = '"-"';

/** An If-Match or If-None-Match header of the caller's version, with its tags as the newest version spells them. */
export const newestTags = (header: string, version: string): string => {
  if (header.trim() === '*') return header;
  const suffix = `.${version}"`;
  return header
    .split(',')
    .map((item) => {
      const tag = item.trim();
      const m = /^(W\/)?"(r\d+)\.(.+)"$/.exec(tag);
      return m && tag.endsWith(suffix) ? `${m[1] ?? ''}"${m[2]}"` : FOREIGN;
    })
    .join(', ');
};
