import { Injectable } from '@nestjs/common';
import { RecordingAccessRulesRepository } from './recording-access-rules.repository.js';
import { RecordingVisibility } from './recording-visibility.js';

export {
  EXAMPLE_VISIBILITY,
  globToLike,
  type HidingRule,
  MATCHED_URL_MAX_LENGTH,
  RecordingVisibility,
} from './recording-visibility.js';

/**
 * Which recordings a user may watch, asked by every read of recordings (the recordings API, the events of a
 * session, playlists, shared links, the sessions batch export): one indexed query, read on every request, so a
 * rule changed or a role membership removed takes effect on the next request, on every replica.
 */
@Injectable()
export class RecordingVisibilityService {
  constructor(private readonly rules: RecordingAccessRulesRepository) {}

  /**
   * What user `userId` may watch of project `teamId`'s recordings: everything for the organization's admins
   * and owners, else everything but what the project's rules naming none of the user's roles match. `null`
   * stands for no user (a link whose issuer is gone): every rule hides what it matches.
   */
  async visibilityFor(teamId: number, userId: number | null): Promise<RecordingVisibility> {
    const hiding = await this.rules.hidingRules(teamId, userId);
    return hiding.length ? new RecordingVisibility(hiding) : RecordingVisibility.EVERYTHING;
  }

  /**
   * Whether the rules hide the project's recording `sessionId` (deleted and expired ones too) from user `userId`:
   * what they may not watch, they may not touch through other resources either (a playlist's pins).
   */
  async hidesSession(teamId: number, userId: number, sessionId: string): Promise<boolean> {
    const visibility = await this.visibilityFor(teamId, userId);
    return visibility.restricted && this.rules.hidesSession(teamId, sessionId, visibility);
  }
}
