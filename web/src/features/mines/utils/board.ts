// The Mines board (SPEC.md §2, §4): 5×5 tiles addressed as "row,col" like the API's
// minePositions, each hidden, a gem or a mine.

export const MINES_SIZE = 5;
export const MINES_TILES = MINES_SIZE * MINES_SIZE;
export const MIN_MINES = 1;
export const MAX_MINES = 24;
export const DEFAULT_MINES = 3;

export type TileState = 'hidden' | 'gem' | 'mine';

export interface TileView {
  row: number;
  col: number;
  /** key is the tile as the API writes it: "row,col". */
  key: string;
  state: TileState;
  /** found is true for a gem the player revealed (not one shown after the game). */
  found: boolean;
  /** hit is the mine that ended the game. */
  hit: boolean;
}

export function tileKey(row: number, col: number): string {
  return `${row},${col}`;
}

export interface BoardInput {
  /** revealed are the gems the player found. */
  revealed: readonly string[];
  /** mines are known once the game is over. */
  mines: readonly string[];
  /** hit is the mine the player stepped on, if any. */
  hit: string | null;
  over: boolean;
}

/**
 * boardView lays out the 25 tiles: the player's gems, and once the game is over every
 * mine and, dimmed, the gems left unfound.
 */
export function boardView({ revealed, mines, hit, over }: BoardInput): TileView[] {
  const found = new Set(revealed);
  const mined = new Set(mines);
  const tiles: TileView[] = [];
  for (let row = 0; row < MINES_SIZE; row++) {
    for (let col = 0; col < MINES_SIZE; col++) {
      const key = tileKey(row, col);
      let state: TileState = 'hidden';
      if (found.has(key)) state = 'gem';
      else if (over) state = mined.has(key) || key === hit ? 'mine' : 'gem';
      tiles.push({ row, col, key, state, found: found.has(key), hit: key === hit });
    }
  }
  return tiles;
}

/** canReveal: a tile is clickable only while the game is active, it is hidden and nothing is pending. */
export function canReveal({ active, pending, tile }: { active: boolean; pending: boolean; tile: TileView }): boolean {
  return active && !pending && tile.state === 'hidden';
}

/** ARROWS move the focus one tile: [rows, columns]. */
const ARROWS: Record<string, [number, number]> = {
  ArrowUp: [-1, 0],
  ArrowDown: [1, 0],
  ArrowLeft: [0, -1],
  ArrowRight: [0, 1],
};

/** nextTile is the tile index a key moves the focus to from index, or null for any other key. */
export function nextTile(index: number, key: string): number | null {
  const row = Math.floor(index / MINES_SIZE);
  const col = index % MINES_SIZE;
  const clamp = (n: number) => Math.min(MINES_SIZE - 1, Math.max(0, n));
  if (key === 'Home') return row * MINES_SIZE;
  if (key === 'End') return row * MINES_SIZE + MINES_SIZE - 1;
  const move = ARROWS[key];
  if (!move) return null;
  return clamp(row + move[0]) * MINES_SIZE + clamp(col + move[1]);
}
