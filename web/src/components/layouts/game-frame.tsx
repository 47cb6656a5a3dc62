import { createContext, use, useId, type ReactNode } from 'react';
import type { Game } from '@/config/games';
import styles from './game-frame.module.css';

export interface GameFrameProps {
  game: Game;
  /** actions sit next to the title, e.g. the fairness panel's button. */
  actions?: ReactNode;
  /** stageTop opens the game's stage (GameLayout), e.g. the recent results. */
  stageTop?: ReactNode;
  /** below follows the game, e.g. the live stats and the live bets table. */
  below?: ReactNode;
  children?: ReactNode;
}

/** StageTop carries GameFrame's stageTop down to the GameLayout the game renders. */
const StageTop = createContext<ReactNode>(null);

/** GameFrame is the common frame of every game screen: its title, description and the game itself. */
export function GameFrame({ game, actions, stageTop, below, children }: GameFrameProps) {
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
      <div className={styles.body}>
        <StageTop value={stageTop}>{children}</StageTop>
      </div>
      {below}
    </section>
  );
}

export interface GameLayoutProps {
  /** controls is the bet panel: bet amount, options and the play button (marked data-primary-action). */
  controls: ReactNode;
  /** children is the stage: the board, the animation and the results. */
  children: ReactNode;
  /** below is the game's secondary content, e.g. Keno's payout table: under the stage, after the controls on phones. */
  below?: ReactNode;
}

/**
 * GameLayout puts a game's stage first: on phones and tablets the board and
 * its result fill the top of the screen with the bet panel under them, its
 * play button (data-primary-action) first, so a player never scrolls to see
 * what a bet did (Stake's mobile layout). From 52rem the controls sit on the
 * left of the stage.
 */
export function GameLayout({ controls, children, below }: GameLayoutProps) {
  return (
    <div className={styles.layout}>
      <div className={styles.stage}>
        {use(StageTop)}
        {children}
      </div>
      <div className={styles.controls}>{controls}</div>
      {below ? <div className={styles.below}>{below}</div> : null}
    </div>
  );
}
