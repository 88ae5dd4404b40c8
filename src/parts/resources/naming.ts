/** OrderLine → order-line */
export const kebabCase = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();

/** createdAt → created_at */
export const snakeCase = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();

/** English plural of the last word: category → categories, box → boxes, order → orders. */
export const pluralize = (word: string): string => {
  if (/[^aeiou]y$/i.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/i.test(word)) return `${word}es`;
  return `${word}s`;
};

/** The default collection segment of a resource: OrderLine → order-lines. */
export const collectionSegment = (resource: string, plural?: string): string =>
  kebabCase(plural ?? pluralize(resource));

/** The word with its indefinite article: Order → an Order, Customer → a Customer, User → a User, Hour → an Hour. */
export const withArticle = (word: string): string =>
  `${/^(?:[aeio]|u(?!s|ni|ti|ro|ku)|hour|honest|honou?r)/i.test(word) ? 'an' : 'a'} ${word}`;
