import { describe, expect, it } from '@jest/globals';
import type { StoredEvent } from '../events.repository.js';
import { toSharedEventDto } from './shared-event.dto.js';

const row = (
  event: string,
  elementsChain: string,
  properties: Record<string, unknown> = {},
): StoredEvent => ({
  uuid: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
  event,
  distinctId: 'buyer@example.com',
  personId: null,
  properties: { $current_url: 'https://shop.example/cart', email: 'buyer@example.com', ...properties },
  timestamp: new Date('2026-11-20T10:00:01.500Z'),
  createdAt: new Date('2026-11-20T10:00:02Z'),
  elementsChain,
  sessionId: 's1',
  windowId: null,
});

describe('toSharedEventDto', () => {
  it('shows the clicked element of $autocapture, $rageclick and $dead_click alike, not the chain', () => {
    const chain = 'span:nth-child="1";button.add:attr__id="add-7"text="Add to cart";div.row';
    for (const event of ['$autocapture', '$rageclick', '$dead_click']) {
      const dto = toSharedEventDto(row(event, chain, { $event_type: 'click' }));
      expect(dto).toMatchObject({ event, element_tag: 'span', element_text: 'Add to cart' });
      expect(JSON.stringify(dto)).not.toContain('add-7');
    }
    expect(toSharedEventDto(row('$autocapture', chain, { $event_type: 'click' })).event_type).toBe('click');
  });

  it('shows no element for other events, even with a chain', () => {
    expect(toSharedEventDto(row('checkout started', 'button:text="Buy"'))).toMatchObject({
      element_tag: null,
      element_text: null,
      event_type: null,
    });
  });
});
