import { useId, type ReactNode } from 'react';
import type { Game } from '@/config/games';
import styles from './game-frame.module.css';

export interface GameFrameProps {
  game: Game;
  /** actions sit next to the title, e.g. the fairness panel's button. */
  actions?: ReactNode;
  children?: ReactNode;
}

/** GameFrame is the common frame of every game screen: its title, description and the game itself. */
export function GameFrame({ game, actions, children }: GameFrameProps) {
  const headingId = useId();
  return (
    <section className={styles.frame} aria-labelledby={headingId}>
      <title>{`${game.title} · Fairplay`}</title>
      <header className={styles.header}>
        <div className={styles.heading}>
          <h1 id={headingId} className={styles.title}>
            {game.title}
          </h1>
          <p className={styles.description}>{game.description}</p>
        </div>
        {actions ? <div className={styles.actions}>{actions}</div> : null}
      </header>
      <div className={styles.body}>{children}</div>
    </section>
  );
}

export interface GameLayoutProps {
  /** controls is the side panel: bet amount, options and the play button. */
  controls: ReactNode;
  /** children is the stage: the board, the animation and the results. */
  children: ReactNode;
}

/** GameLayout puts a game's controls beside its stage, and above it on narrow screens. */
export function GameLayout({ controls, children }: GameLayoutProps) {
  return (
    <div className={styles.layout}>
      <div className={styles.controls}>{controls}</div>
      <div className={styles.stage}>{children}</div>
    </div>
  );
}
