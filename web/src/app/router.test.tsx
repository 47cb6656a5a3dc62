import { waitFor } from '@testing-library/react';
import { preloadOnIntent, preloadRoute } from './router';

const loaded = vi.hoisted(() => ({ dice: 0, keno: 0 }));

vi.mock('./routes/games/dice', () => {
  loaded.dice++;
  return { default: () => null };
});
vi.mock('./routes/games/keno', () => {
  loaded.keno++;
  return { default: () => null };
});

describe('route preloading', () => {
  it('loads the chunk of a screen when a link to it is pointed at, and nothing for other links', async () => {
    const stop = preloadOnIntent();
    document.body.innerHTML =
      '<a href="https://elsewhere.example/games/keno">away</a><a href="/games/dice"><span>Dice</span></a>';
    document.querySelector('a')?.dispatchEvent(new Event('pointerover', { bubbles: true }));
    document.querySelector('a span')?.dispatchEvent(new Event('pointerover', { bubbles: true }));
    await waitFor(() => {
      expect(loaded.dice).toBe(1);
    });
    expect(loaded.keno).toBe(0);
    stop();
    preloadRoute('/no-such-screen');
    document.body.innerHTML = '';
  });
});
