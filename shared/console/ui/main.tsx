import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { keepToken } from './api.js';
import { GroupDetailView } from './group-detail.js';
import { GroupsView } from './groups.js';
import { MessageView } from './message.js';
import { OverviewView } from './overview.js';

/**
 * `#/q/<queue>/g/<group key>` → ['q', queue, 'g', key], each part URL-decoded. A message is
 * `m/<id>`, or `p/<position>/<body sha256>` when it has no id.
 */
function route(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
}

function App() {
  const [parts, setParts] = useState(route());
  useEffect(() => {
    const onHash = (): void => {
      setParts(route());
      // Keyboard and screen-reader users land on the new page's heading.
      setTimeout(() => document.querySelector<HTMLElement>('h1')?.focus(), 0);
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const [kind, queue, sub, id] = parts;
  // Keyed by the route: another page starts afresh, without the last one's banners, dialogs or forms.
  const key = parts.join('/');
  if (kind === 'q' && queue !== undefined && sub === 'g' && id !== undefined) return <GroupDetailView key={key} queue={queue} group={id} />;
  if (kind === 'q' && queue !== undefined && sub === 'm' && id !== undefined) return <MessageView key={key} queue={queue} pick={{ id }} />;
  if (kind === 'q' && queue !== undefined && sub === 'p' && id !== undefined)
    return <MessageView key={key} queue={queue} pick={{ position: Number(id), bodySha256: parts[4] ?? '' }} />;
  if (kind === 'q' && queue !== undefined) return <GroupsView key={key} queue={queue} />;
  return <OverviewView />;
}

keepToken();
const root = document.getElementById('app') as HTMLElement;
// The "Loading…" placeholder goes: render() adds to what the container holds.
root.textContent = '';
render(<App />, root);
