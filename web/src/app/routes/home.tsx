import { GameGrid } from '@/features/lobby/components/game-grid';
import styles from './routes.module.css';

export default function HomeRoute() {
  return (
    <div className={styles.home}>
      <title>Fairplay · Provably fair play-money casino</title>
      <section className={styles.hero}>
        <p className={styles.kicker}>Play money · Provably fair</p>
        <p className={styles.heroText}>
          Six original games. Every outcome can be verified. Nothing here costs real money.
        </p>
      </section>
      <section aria-labelledby="originals-heading" className={styles.section}>
        <h1 id="originals-heading" className={styles.sectionTitle}>
          Fairplay Originals
        </h1>
        <GameGrid headingId="originals-heading" />
      </section>
    </div>
  );
}
