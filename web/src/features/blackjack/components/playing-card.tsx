import { cardName, suitOf, type Card } from '../utils/hand';
import styles from './blackjack.module.css';

/** PlayingCard draws one card; the dealer's face-down card shows '?'. */
export function PlayingCard({ card }: { card: Card }) {
  if (card.hidden) {
    return (
      <li className={`${styles.card} ${styles.back}`} aria-label={cardName(card)}>
        <span aria-hidden="true">?</span>
      </li>
    );
  }
  const suit = suitOf(card.suit);
  return (
    <li className={`${styles.card} ${suit.red ? styles.red : styles.black}`} aria-label={cardName(card)}>
      <span className={styles.rank} aria-hidden="true">
        {card.value}
        <span className={styles.cornerSuit}>{suit.symbol}</span>
      </span>
      <span className={styles.suit} aria-hidden="true">
        {suit.symbol}
      </span>
    </li>
  );
}

export interface HandProps {
  label: string;
  cards: readonly Card[];
  total: number | null;
}

/** Hand is a labelled row of cards with the total of the visible ones. */
export function Hand({ label, cards, total }: HandProps) {
  return (
    <div className={styles.hand}>
      <p className={styles.handHead}>
        <span>{label}</span>
        {total !== null ? (
          <span className={styles.total} aria-label={`${label} total`}>
            {total}
          </span>
        ) : null}
      </p>
      <ul className={styles.cards} aria-label={`${label} cards`}>
        {cards.map((card, i) => (
          <PlayingCard key={`${i}-${card.hidden ? 'back' : `${card.value ?? ''}${card.suit ?? ''}`}`} card={card} />
        ))}
      </ul>
    </div>
  );
}
