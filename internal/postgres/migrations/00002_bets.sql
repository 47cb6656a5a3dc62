-- +goose Up
-- Provably-fair seed pairs: one active (unrevealed) pair per user. nonce counts
-- the bets made with the pair; the next bet uses nonce + 1.
CREATE TABLE seed_pairs (
    id               uuid PRIMARY KEY,
    user_id          uuid        NOT NULL REFERENCES users (id),
    server_seed      text        NOT NULL,
    server_seed_hash text        NOT NULL,
    client_seed      text        NOT NULL,
    nonce            bigint      NOT NULL DEFAULT 0 CHECK (nonce >= 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    revealed_at      timestamptz
);
CREATE UNIQUE INDEX seed_pairs_active_key ON seed_pairs (user_id) WHERE revealed_at IS NULL;
CREATE INDEX seed_pairs_user_idx ON seed_pairs (user_id, created_at DESC);

-- Every bet, instant or stateful. amount is the total stake (a doubled
-- blackjack hand counts both stakes); multiplier is in 1e-4 units; payout is
-- what was credited. A stateful game is a bet with status 'active' whose state
-- lives in the row until it settles. client_seed is copied from the pair at
-- bet time, so a later client-seed change never alters how the bet verifies.
CREATE TABLE bets (
    id           uuid PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES users (id),
    game         text        NOT NULL CHECK (game IN ('dice', 'plinko', 'keno', 'mines', 'pump', 'blackjack')),
    status       text        NOT NULL DEFAULT 'settled' CHECK (status IN ('active', 'settled')),
    amount       bigint      NOT NULL CHECK (amount > 0),
    multiplier   bigint      NOT NULL DEFAULT 0 CHECK (multiplier >= 0),
    payout       bigint      NOT NULL DEFAULT 0 CHECK (payout >= 0),
    seed_pair_id uuid        NOT NULL REFERENCES seed_pairs (id),
    client_seed  text        NOT NULL,
    nonce        bigint      NOT NULL,
    params       jsonb       NOT NULL DEFAULT '{}',
    state        jsonb       NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    settled_at   timestamptz,
    CONSTRAINT bets_nonce_key UNIQUE (seed_pair_id, nonce),
    CONSTRAINT bets_settled_check CHECK ((status = 'settled') = (settled_at IS NOT NULL))
);
CREATE INDEX bets_user_idx ON bets (user_id, created_at DESC, id DESC);
CREATE INDEX bets_created_idx ON bets (created_at);
-- One running stateful game per player and game.
CREATE UNIQUE INDEX bets_one_active_key ON bets (user_id, game) WHERE status = 'active';

-- +goose Down
DROP TABLE bets;
DROP TABLE seed_pairs;
