import { useId, type ReactNode } from 'react';
import type { Game } from '@/config/games';
import styles from './game-frame.module.css';

/** GameFrame is the common frame of every game screen: its title, description and the game itself. */
export function GameFrame({ game, children }: { game: Game; children?: ReactNode }) {
  const headingId = useId();
  return (
    <section className={styles.frame} aria-labelledby={headingId}>
      <title>{`${game.title} · Fairplay`}</title>
      <header className={styles.header}>
        <h1 id={headingId} className={styles.title}>
          {game.title}
        </h1>
        <p className={styles.description}>{game.description}</p>
      </header>
      <div className={styles.body}>{children}</div>
    </section>
  );
}
