/**
 * The page of a shared recording (`/shared/:access_token`) and its embeddable form (`/embedded/:access_token`).
 * The service writes the recording's facts into the page (`#recording-data`, JSON, no person data); the events
 * come from the public snapshot endpoint of the share.
 */
import 'rrweb/dist/style.css';
import './player.css';
import './shared-page.css';
import { Player, type RecordingInfo } from './player.js';

interface PageData {
  access_token: string;
  embedded: boolean;
  recording: RecordingInfo;
}

function start(): void {
  const data = JSON.parse(
    document.getElementById('recording-data')?.textContent ?? 'null',
  ) as PageData | null;
  const app = document.getElementById('app');
  if (!data || !app) return;
  const player = new Player({
    info: data.recording,
    snapshotsUrl: `/api/shared/${encodeURIComponent(data.access_token)}/snapshots`,
    chrome: !data.embedded,
    keyboardTarget: document,
  });
  app.replaceChildren(player.element);
  void player.load();
}

start();
