import { describe, expect, it } from '@jest/globals';
import { EVENTS_MODEL } from '../../../events/events-export.js';
import { PERSONS_MODEL } from '../../../persons/persons-export.js';
import { captureEvent, fileShape } from './posthog-formats.js';

const ROW = {
  uuid: '0193a1f2-0000-7000-8000-000000000001',
  event: '$autocapture',
  properties: { $event_type: 'click', $ip: '10.0.0.1' },
  distinct_id: 'buyer',
  team_id: 7,
  timestamp: new Date('2026-11-30T00:00:00.000Z'),
  elements: 'button:text="Buy"nth-child="1"nth-of-type="1"',
  set: null,
};

describe('fileShape', () => {
  it('events: PostHog’s S3 columns, the elements chain as elements_chain', () => {
    const { model, row } = fileShape(EVENTS_MODEL);
    expect(model.columns.map((c) => c.name)).toEqual([
      'uuid',
      'timestamp',
      '_inserted_at',
      'created_at',
      'event',
      'properties',
      'distinct_id',
      'elements_chain',
      'person_properties',
      'person_id',
    ]);
    expect(row!(ROW).elements_chain).toBe(ROW.elements);
  });

  it('other models: their own columns', () => {
    expect(fileShape(PERSONS_MODEL)).toEqual({ model: PERSONS_MODEL, row: null });
  });
});

describe('captureEvent', () => {
  it('PostHog’s capture event: five fields, geoip off, the chain of an autocapture in its properties', () => {
    const event = captureEvent(ROW);
    expect(event).toEqual({
      uuid: ROW.uuid,
      distinct_id: 'buyer',
      timestamp: '2026-11-30T00:00:00.000Z',
      event: '$autocapture',
      properties: {
        $event_type: 'click',
        $ip: '10.0.0.1',
        $geoip_disable: true,
        $elements_chain: ROW.elements,
      },
    });
    // The row's properties are not changed.
    expect(ROW.properties).toEqual({ $event_type: 'click', $ip: '10.0.0.1' });
    expect(captureEvent({ ...ROW, event: '$pageview' }).properties).not.toHaveProperty('$elements_chain');
  });
});
