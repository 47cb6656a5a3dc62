// The six original games (SPEC.md §2): the home grid links to them and each
// game screen shows its title and description in the common frame.

export type GameSlug = 'dice' | 'mines' | 'plinko' | 'pump' | 'keno' | 'blackjack';

export interface Game {
  slug: GameSlug;
  title: string;
  description: string;
  path: `/games/${GameSlug}`;
}

export const GAMES: readonly Game[] = [
  { slug: 'dice', title: 'Dice', description: 'Pick a target and roll under it to win.', path: '/games/dice' },
  {
    slug: 'mines',
    title: 'Mines',
    description: 'Uncover gems, dodge the mines and cash out in time.',
    path: '/games/mines',
  },
  {
    slug: 'plinko',
    title: 'Plinko',
    description: 'Drop balls and watch them bounce for rewards.',
    path: '/games/plinko',
  },
  { slug: 'pump', title: 'Pump', description: 'Pump up the balloon for bigger rewards.', path: '/games/pump' },
  { slug: 'keno', title: 'Keno', description: 'Select numbers and wait for the draw.', path: '/games/keno' },
  {
    slug: 'blackjack',
    title: 'Blackjack',
    description: 'Classic card game: hit or stay to beat the dealer.',
    path: '/games/blackjack',
  },
];

export function gameBySlug(slug: GameSlug): Game {
  const game = GAMES.find((g) => g.slug === slug);
  if (!game) throw new Error(`unknown game ${slug}`);
  return game;
}
