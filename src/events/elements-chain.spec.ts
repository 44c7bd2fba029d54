import { describe, expect, it } from '@jest/globals';
import { elementsChainOf } from './elements-chain.js';

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
