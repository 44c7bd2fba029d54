import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Where the code marks a statement `prepared(…)`. A named prepared statement gets a generic plan after a few
 * executions, which suits a lookup by key and can ruin a list or a filter whose best plan depends on its values (a
 * project of a million recordings and one of ten; docs/data-access.md, "The rule", item 3). So the sites are
 * listed here, each with what it looks up: a new site fails this test until it is added, with its reason, in review.
 */
const ALLOWED: Record<string, string> = {
  'activity-log/activity-log.repository.ts ActivityLogRepository.insert': 'one row: the entry of a write',
  'activity-log/activity-log.repository.ts ActivityLogRepository.insertRead': 'one row: the entry of a read',
  'invites/invites.repository.ts InvitesRepository.findWithCreators':
    'invites by their ids, from the same request',
  'invites/invites.repository.ts InvitesRepository.insert': 'one row: the invite',
  'invites/invites.repository.ts InvitesRepository.lockAddresses':
    "advisory locks of the request's addresses",
  'invites/invites.repository.ts InvitesRepository.deleteForEmail': "an organization's invite of one address",
  'memberships/memberships.repository.ts MembershipsRepository.accessOf':
    "the caller's membership of one organization",
  'memberships/memberships.repository.ts MembershipsRepository.accessWithProjectsOf':
    "the caller's membership of one organization, with the access rules of its first projects",
  'memberships/memberships.repository.ts MembershipsRepository.memberEmails':
    "an organization's members among the given addresses",
  'organizations/organizations.repository.ts OrganizationsRepository.findViewForUser':
    'one organization by id',
  'personal-api-keys/personal-api-keys.repository.ts PersonalApiKeysRepository.findActiveByDigest':
    'one key by its digest',
  'projects/projects.repository.ts ProjectsRepository.withAccessSql':
    "one project by id, with the caller's access",
  'session-recordings/session-recordings.repository.ts FIND_ONE_PREPARED':
    'one recording by project and session id',
};

const SRC = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The name of the declaration around `node`: `Class.method`, a function's or a top-level constant's name. */
function enclosingName(node: ts.Node): string {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if ((ts.isMethodDeclaration(at) || ts.isPropertyDeclaration(at)) && ts.isClassDeclaration(at.parent)) {
      return `${at.parent.name?.text ?? '(class)'}.${at.name.getText()}`;
    }
    if (ts.isFunctionDeclaration(at)) return at.name?.text ?? '(function)';
    if (ts.isVariableDeclaration(at) && ts.isSourceFile(at.parent.parent.parent)) return at.name.getText();
  }
  return '(top level)';
}

/** Every call of `prepared(…)` in the service's code, as `file declaration`. */
function preparedSites(): string[] {
  const sites: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('prepared-sql.js')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    // The local names `prepared` is imported under (an alias too), from src/database/prepared-sql.ts.
    const names = new Set<string>();
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
      if (!statement.moduleSpecifier.text.endsWith('prepared-sql.js')) continue;
      const bindings = statement.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings)) continue;
      for (const element of bindings.elements) {
        if ((element.propertyName ?? element.name).text === 'prepared') names.add(element.name.text);
      }
    }
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && names.has(node.expression.text)) {
        sites.push(`${relative(SRC, file).split('\\').join('/')} ${enclosingName(node)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return sites;
}

describe('prepared statements are marked only where listed', () => {
  const sites = preparedSites();

  it('finds the marked statements (the scan works)', () => {
    expect(sites).toContain(
      'personal-api-keys/personal-api-keys.repository.ts PersonalApiKeysRepository.findActiveByDigest',
    );
    expect(sites.length).toBeGreaterThanOrEqual(Object.keys(ALLOWED).length);
  });

  it('every site is a lookup by key or a hot write, listed with what it looks up', () => {
    const unlisted = [...new Set(sites)].filter((site) => !(site in ALLOWED));
    expect(unlisted).toEqual([]);
  });

  it('every listed site still marks a statement (the list does not outlive the code)', () => {
    const gone = Object.keys(ALLOWED).filter((site) => !sites.includes(site));
    expect(gone).toEqual([]);
  });
});
