/**
 * The page of a shared recording (`/shared/:access_token`) and its embeddable form (`/embedded/:access_token`).
 * The service writes the recording's facts into the page (`#recording-data`, JSON, no person data); the events
 * come from the public snapshot endpoint of the share, and the inspector's analytics events from the share's
 * public events read (`/api/shared/:token/events`: names, times, URLs, element texts, exception messages, never
 * the person or the events' properties).
 */
import 'rrweb/dist/style.css';
import './player.css';
import './shared-page.css';
import { fromSharedEvent, type SharedApiEvent } from '../lib/session-events.js';
import { Inspector } from './inspector.js';
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
  let inspector: Inspector | null = null;
  const player = new Player({
    info: data.recording,
    snapshotsUrl: `/api/shared/${encodeURIComponent(data.access_token)}/snapshots`,
    chrome: !data.embedded,
    keyboardTarget: document,
    onEvents: (events) => inspector?.add(events),
  });
  if (data.embedded) {
    app.replaceChildren(player.element);
  } else {
    // The share page lists what the recording holds besides the page (never anything about its person).
    inspector = new Inspector(player);
    const layout = document.createElement('div');
    layout.className = 'player-with-inspector';
    layout.append(player.element, inspector.element);
    app.replaceChildren(layout);
    const token = encodeURIComponent(data.access_token);
    void inspector.loadEvents(
      async (offset, limit, signal) => {
        const response = await fetch(`/api/shared/${token}/events?limit=${limit}&offset=${offset}`, {
          signal,
          cache: 'no-store',
        });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const page = (await response.json()) as { count: number; results: SharedApiEvent[] };
        return { count: page.count, results: page.results.map(fromSharedEvent) };
      },
      (error) => `The session’s events could not be loaded (${error.message}).`,
    );
  }
  void player.load();
}

start();
