import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { ApiError } from '../common/errors/api-error.js';
import { CreateRecordingAccessRuleDto } from './dto/recording-access-rule-input.dto.js';
import { toRecordingAccessRuleDto } from './dto/recording-access-rule.dto.js';
import type { RecordingAccessRuleEntity } from './recording-access-rule.entity.js';
import { ruleMatchOf } from './recording-access-rules.service.js';
import { globToLike, type HidingRule, RecordingVisibility } from './recording-visibility.js';

const violations = async (body: unknown) =>
  (await validate(plainToInstance(CreateRecordingAccessRuleDto, body))).map((e) => [
    e.property,
    Object.values(e.constraints ?? {}),
  ]);

/** The 400 `ruleMatchOf` throws, as `[attr, detail]`. */
function refusal(work: () => unknown): [string | null, string] {
  try {
    work();
  } catch (error) {
    if (error instanceof ApiError) return [error.body.attr, error.body.detail];
    throw error;
  }
  throw new Error('not refused');
}

const url = (pattern: string): HidingRule => ({
  kind: 'start_url',
  urlPattern: pattern,
  propertyKey: null,
  propertyOperator: null,
  propertyValue: null,
});
const property = (key: string, operator: HidingRule['propertyOperator'], value: string): HidingRule => ({
  kind: 'person_property',
  urlPattern: null,
  propertyKey: key,
  propertyOperator: operator,
  propertyValue: value,
});

describe('recording access rules', () => {
  it('answers a rule field by field, its roles and creator included', () => {
    const at = new Date('2026-11-21T10:00:00.000Z');
    const rule = {
      id: 'r1',
      teamId: 7,
      kind: 'start_url',
      urlPattern: 'https://example.com/*',
      propertyKey: null,
      propertyOperator: null,
      propertyValue: null,
      createdById: null,
      createdBy: null,
      createdAt: at,
      updatedAt: new Date(at.getTime() + 1000),
    } as RecordingAccessRuleEntity;
    expect(toRecordingAccessRuleDto({ rule, roleIds: ['a', 'b'] })).toEqual({
      id: 'r1',
      kind: 'start_url',
      url_pattern: 'https://example.com/*',
      property_key: null,
      property_operator: null,
      property_value: null,
      role_ids: ['a', 'b'],
      created_by: null,
      created_at: '2026-11-21T10:00:00.000Z',
      updated_at: '2026-11-21T10:00:01.000Z',
    });
  });

  it('validates the body field by field', async () => {
    expect(await violations({ kind: 'start_url', url_pattern: 'https://a/*', role_ids: [] })).toEqual([]);
    expect(await violations({ kind: 'url', role_ids: [] })).toEqual([
      ['kind', ['Must be "start_url" or "person_property".']],
    ]);
    expect(await violations({ kind: 'start_url', url_pattern: '  ', role_ids: [] })).toEqual([
      ['url_pattern', ['This field may not be blank.']],
    ]);
    expect(await violations({ kind: 'start_url', url_pattern: 'x'.repeat(501), role_ids: [] })).toEqual([
      ['url_pattern', ['Ensure this field has no more than 500 characters.']],
    ]);
    expect(await violations({ kind: 'start_url', url_pattern: 'a', role_ids: ['nope'] })).toEqual([
      ['role_ids', ['Each role id must be a valid UUID.']],
    ]);
    expect((await violations({ kind: 'start_url', url_pattern: 'a' }))[0]?.[0]).toBe('role_ids');
    expect(
      await violations({ kind: 'person_property', property_operator: 'gt', property_key: 'a', role_ids: [] }),
    ).toEqual([['property_operator', ['Must be "exact", "is_not" or "icontains".']]]);
    // A number or a boolean value is its text, as `->>` reads the stored property.
    expect(plainToInstance(CreateRecordingAccessRuleDto, { property_value: 42 }).property_value).toBe('42');
  });

  it('builds the match of a kind, refusing a missing field or one of the other kind by name', () => {
    expect(ruleMatchOf({ kind: 'start_url', url_pattern: 'https://a/*' }, null)).toEqual({
      kind: 'start_url',
      urlPattern: 'https://a/*',
      propertyKey: null,
      propertyOperator: null,
      propertyValue: null,
    });
    expect(
      ruleMatchOf({ kind: 'person_property', property_key: 'email', property_value: 'x' }, null),
    ).toEqual(expect.objectContaining({ propertyOperator: 'exact' }));
    expect(refusal(() => ruleMatchOf({}, null))[0]).toBe('kind');
    expect(refusal(() => ruleMatchOf({ kind: 'start_url' }, null))[0]).toBe('url_pattern');
    expect(
      refusal(() => ruleMatchOf({ kind: 'start_url', url_pattern: 'a', property_key: 'k' }, null)),
    ).toEqual(['property_key', 'Must be null (or left out) for a rule of kind "start_url".']);
    expect(refusal(() => ruleMatchOf({ kind: 'person_property', property_key: 'k' }, null))[0]).toBe(
      'property_value',
    );
    expect(refusal(() => ruleMatchOf({ kind: 'start_url', url_pattern: '*'.repeat(11) }, null))[0]).toBe(
      'url_pattern',
    );
  });

  it('changes a rule: fields left out are kept, and a new kind clears those of the former one', () => {
    const current = ruleMatchOf(
      { kind: 'person_property', property_key: 'plan', property_value: 'pro' },
      null,
    );
    expect(ruleMatchOf({ property_value: 'free' }, current)).toEqual({ ...current, propertyValue: 'free' });
    expect(ruleMatchOf({ kind: 'start_url', url_pattern: 'https://a/*' }, current)).toEqual({
      kind: 'start_url',
      urlPattern: 'https://a/*',
      propertyKey: null,
      propertyOperator: null,
      propertyValue: null,
    });
    expect(refusal(() => ruleMatchOf({ kind: 'start_url' }, current))[0]).toBe('url_pattern');
    expect(refusal(() => ruleMatchOf({ url_pattern: 'https://a/*' }, current))[0]).toBe('url_pattern');
  });

  it('turns a glob into a LIKE pattern: only * is special, runs of it are one', () => {
    expect(globToLike('https://example.com/billing/*')).toBe('https://example.com/billing/%');
    expect(globToLike('*://**/a_b%c\\d*')).toBe('%://%/a\\_b\\%c\\\\d%');
    expect(globToLike('(a+)+$?[x]')).toBe('(a+)+$?[x]');
  });

  it('adds no condition when nothing is hidden, and binds every value of the rules', () => {
    const bound: unknown[] = [];
    const bind = (v: unknown) => `$${bound.push(v)}`;
    expect(RecordingVisibility.EVERYTHING.visibleSql('r', bind)).toBeNull();
    expect(RecordingVisibility.EVERYTHING.hiddenSessionSql('e.team_id', 'e.session_id', bind)).toBeNull();
    const sql = new RecordingVisibility([
      url('https://a/*'),
      url("*'; DROP TABLE x; --"),
      property('email', 'icontains', '@example.com'),
      property('plan', 'is_not', 'pro'),
    ]).visibleSql('r', bind)!;
    expect(bound).toEqual([['https://a/%', "%'; DROP TABLE x; --"], 'email', '@example.com', 'plan', 'pro']);
    expect(sql).not.toContain('DROP');
    expect(sql).toContain('ILIKE ANY($1::text[])');
    expect(sql).toContain(
      'NOT EXISTS (SELECT 1 FROM persons rvp WHERE rvp.team_id = r.team_id AND rvp.id = r.person_id',
    );
  });
});
