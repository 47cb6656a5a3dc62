import type { GameSlug } from '@/config/games';

// Decorative glyphs for the game cards (hidden from assistive technology).

const common = {
  fill: 'none',
  stroke: 'currentColor',
  strokeWidth: 2.5,
  strokeLinecap: 'round',
  strokeLinejoin: 'round',
} as const;

function Glyph({ slug }: { slug: GameSlug }) {
  switch (slug) {
    case 'dice':
      return (
        <>
          <rect x="10" y="10" width="44" height="44" rx="9" {...common} />
          {[
            [22, 22],
            [42, 22],
            [32, 32],
            [22, 42],
            [42, 42],
          ].map(([cx, cy]) => (
            <circle key={`${cx}-${cy}`} cx={cx} cy={cy} r="3.5" fill="currentColor" />
          ))}
        </>
      );
    case 'mines':
      return (
        <>
          <path d="M32 8l18 16-18 32-18-32z" {...common} />
          <path d="M14 24h36M24 24l8 32 8-32M24 24l8-16 8 16" {...common} strokeWidth={1.8} />
        </>
      );
    case 'plinko':
      return (
        <>
          {[
            [32, 14],
            [24, 26],
            [40, 26],
            [16, 38],
            [32, 38],
            [48, 38],
          ].map(([cx, cy]) => (
            <circle key={`${cx}-${cy}`} cx={cx} cy={cy} r="3" fill="currentColor" />
          ))}
          <path d="M8 52h48M20 46v6M32 46v6M44 46v6" {...common} />
        </>
      );
    case 'pump':
      return (
        <>
          <ellipse cx="32" cy="26" rx="16" ry="19" {...common} />
          <path d="M29 45l3 4 3-4M32 49c0 5-4 6-4 10" {...common} />
        </>
      );
    case 'keno':
      return (
        <>
          {[0, 1, 2].flatMap((row) =>
            [0, 1, 2].map((col) => (
              <rect
                key={`${row}-${col}`}
                x={12 + col * 14}
                y={12 + row * 14}
                width="11"
                height="11"
                rx="2.5"
                {...common}
                strokeWidth={2}
                fill={(row + col) % 3 === 0 ? 'currentColor' : 'none'}
              />
            )),
          )}
        </>
      );
    case 'blackjack':
      return (
        <>
          <rect x="12" y="10" width="28" height="40" rx="4" {...common} transform="rotate(-10 26 30)" />
          <rect x="24" y="14" width="28" height="40" rx="4" {...common} />
          <path d="M38 26c-4 4-7 6-7 9a3.5 3.5 0 007 1 3.5 3.5 0 007-1c0-3-3-5-7-9z" fill="currentColor" />
        </>
      );
  }
}

export function GameIcon({ slug }: { slug: GameSlug }) {
  return (
    <svg viewBox="0 0 64 64" width="64" height="64" aria-hidden="true" focusable="false">
      <Glyph slug={slug} />
    </svg>
  );
}
