import { describe, expect, it } from '@jest/globals';
import { clickedElementOf, elementsChainOf } from './elements-chain.js';

describe('elementsChainOf', () => {
  it('keeps a chain posthog-js sent ready', () => {
    expect(elementsChainOf({ $elements_chain: 'a:text="x"' })).toBe('a:text="x"');
  });

  it("writes 1.x elements in PostHog's text form, sorted classes and attributes, quotes escaped", () => {
    expect(
      elementsChainOf({
        $elements: [
          {
            tag_name: 'a',
            $el_text: 'Say "hi"',
            attr__class: 'z a',
            attr__href: '/x',
            nth_child: 1,
            nth_of_type: 2,
          },
          { tag_name: 'body' },
          'not an element',
        ],
      }),
    ).toBe(
      'a.a.z:attr__class="z a"attr__href="/x"href="/x"nth-child="1"nth-of-type="2"text="Say \\"hi\\"";body:nth-child="0"nth-of-type="0"',
    );
  });

  it("is '' without elements", () => {
    expect(elementsChainOf({})).toBe('');
    expect(elementsChainOf({ $elements: 'x' })).toBe('');
  });
});

describe('clickedElementOf', () => {
  it("reads the clicked element's tag and the innermost text, quotes unescaped", () => {
    expect(
      clickedElementOf('svg.icon:nth-child="1";button.buy:attr__id="b"text="Say \\"hi\\"; now";body'),
    ).toEqual({ tag: 'svg', text: 'Say "hi"; now' });
    expect(clickedElementOf('a.x:href="/t"text="Pricing"nth-child="2"')).toEqual({
      tag: 'a',
      text: 'Pricing',
    });
  });

  it('does not take an attribute ending in text for the text, and has none without one', () => {
    expect(clickedElementOf('div:attr__data-text="no"nth-child="1"')).toEqual({ tag: 'div', text: null });
    expect(clickedElementOf('')).toBeNull();
  });

  it('caps the text', () => {
    expect(clickedElementOf(`p:text="${'x'.repeat(500)}"`)?.text).toHaveLength(200);
  });
});
