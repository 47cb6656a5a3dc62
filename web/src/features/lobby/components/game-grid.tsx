import { Link } from 'react-router';
import { GAMES } from '@/config/games';
import styles from './game-grid.module.css';
import { GameIcon } from './game-icon';

/** GameGrid is the home page's grid of the six original games, each linking to its screen. */
export function GameGrid({ headingId }: { headingId: string }) {
  return (
    <ul className={styles.grid} aria-labelledby={headingId}>
      {GAMES.map((game) => (
        <li key={game.slug}>
          <Link to={game.path} className={`${styles.card} ${styles[game.slug]}`}>
            <span className={styles.art}>
              <GameIcon slug={game.slug} />
            </span>
            <span className={styles.body}>
              <span className={styles.title}>{game.title}</span>
              <span className={styles.description}>{game.description}</span>
            </span>
          </Link>
        </li>
      ))}
    </ul>
  );
}
