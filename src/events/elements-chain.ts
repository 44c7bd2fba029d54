/**
 * The `elements_chain` of an autocapture event: posthog-js sends it ready (`$elements_chain`, current versions)
 * or as a list of elements (`$elements`, 1.x versions), which is written out in PostHog's text form — per
 * element, innermost first and separated by `;`: the tag, its sorted classes after `.`, then `:` and the
 * sorted `key="value"` attributes (`text`, `nth-child`, `nth-of-type`, `href`, `attr_id`, `attr__*`), quotes
 * escaped.
 */

type Json = Record<string, unknown>;

/** Most elements of one chain written out (an autocapture chain is the path from the clicked element up). */
const MAX_ELEMENTS = 100;
/** Longest text of one attribute kept. */
const MAX_VALUE = 400;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const escape = (text: string): string => text.slice(0, MAX_VALUE).replace(/"/g, '\\"');

const str = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null;

function classesOf(element: Json): string[] {
  if (Array.isArray(element.classes))
    return element.classes.filter((c): c is string => typeof c === 'string');
  const attr = element.attr__class;
  if (typeof attr === 'string') return attr.split(/\s+/).filter(Boolean);
  if (Array.isArray(attr)) return attr.filter((c): c is string => typeof c === 'string');
  return [];
}

function elementText(element: Json): string {
  let out = typeof element.tag_name === 'string' ? element.tag_name : '';
  for (const c of classesOf(element).sort()) out += `.${c.replace(/"/g, '')}`;
  const attributes: [string, string][] = [];
  const text = str(element.$el_text) ?? str(element.text);
  if (text) attributes.push(['text', text]);
  attributes.push(['nth-child', str(element.nth_child) ?? '0']);
  attributes.push(['nth-of-type', str(element.nth_of_type) ?? '0']);
  const href = str(element.attr__href) ?? str(element.href);
  if (href) attributes.push(['href', href]);
  const id = str(element.attr__id) ?? str(element.attr_id);
  if (id) attributes.push(['attr_id', id]);
  for (const key of Object.keys(element)) {
    if (!key.startsWith('attr__')) continue;
    const value = str(element[key]);
    if (value !== null) attributes.push([key, value]);
  }
  attributes.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `${out}:${attributes.map(([k, v]) => `${escape(k)}="${escape(v)}"`).join('')}`;
}

/** The event's elements chain, or '' when it has none. */
export function elementsChainOf(properties: Json): string {
  const chain = properties.$elements_chain;
  if (typeof chain === 'string') return chain;
  const elements = properties.$elements;
  if (!Array.isArray(elements)) return '';
  return elements.slice(0, MAX_ELEMENTS).filter(isObject).map(elementText).join(';');
}

/** Longest element text `clickedElementOf` returns. */
export const ELEMENT_TEXT_MAX = 200;

/** The elements of a chain, split on the `;` that are outside quoted values. */
function chainElements(chain: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < chain.length; i++) {
    const c = chain[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ';' && !quoted) {
      out.push(chain.slice(start, i));
      start = i + 1;
      if (out.length >= MAX_ELEMENTS) return out;
    }
  }
  out.push(chain.slice(start));
  return out;
}

const TEXT_ATTRIBUTE = /(?:^|[:"])text="((?:[^"\\]|\\.)*)"/;

/**
 * What an autocapture click shows of its element: the clicked element's tag (the chain's first) and the text of
 * the innermost element that has one (a click on an icon inside a button reads as the button's text); null for
 * an empty chain.
 */
export function clickedElementOf(chain: string): { tag: string; text: string | null } | null {
  if (!chain) return null;
  const elements = chainElements(chain);
  const tag = /^[^.:]*/.exec(elements[0])?.[0] ?? '';
  for (const element of elements) {
    const colon = element.indexOf(':');
    const match = colon < 0 ? null : TEXT_ATTRIBUTE.exec(element.slice(colon));
    if (match) return { tag, text: match[1].replace(/\\(.)/g, '$1').slice(0, ELEMENT_TEXT_MAX) };
  }
  return { tag, text: null };
}
